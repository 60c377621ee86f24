-- Quorum mode's acquire on one of the masters (one master or a Cluster use
-- queue-acquire.lua): take the lock for ARGV[1] when the key is free, or reenter when
-- ARGV[1] already holds it. Waiters wait in their own client (no queue spans masters).
-- KEYS[1] lock hash (owner -> count), KEYS[2] fencing counter, KEYS[3] the calling
-- client's mark on this server (see below).
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] key retention ms (the counter's TTL; absent:
-- RETENTION). Callers leave a trailing default off: each argument costs both the client
-- and the server.
-- Returns {1, token} when held, {0, pttl, counter} otherwise: the counter lets quorum
-- mode raise lagging masters' counters.
-- The mark: a server restarted empty has forgotten the locks it granted, and a client
-- may not see the restart (a proxy keeps its connection up; a client library that
-- reconnects on its own tells nothing). The mark lives in memory like the locks, so
-- when it is missing this server is one the client has not met since it last set it:
-- the call sets it and adds the server's run_id and uptime (s) to the reply, read in
-- the same step, so the client can tell a restart and not count this call's grant.
local MARK_TTL = 60000
local key, fence, owner, lease = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])
local retention = tonumber(ARGV[3]) or RETENTION
local function met(reply)
  if redis.call('exists', KEYS[3]) == 1 then return reply end
  -- Within the key retention: no key of holdfast's outlives it (DESIGN, keyRetention).
  redis.call('set', KEYS[3], 1, 'PX', math.min(MARK_TTL, retention))
  local info = redis.call('info', 'server')
  reply[#reply + 1] = string.match(info, 'run_id:(%w+)')
  reply[#reply + 1] = tonumber(string.match(info, 'uptime_in_seconds:(%d+)'))
  return reply
end
if redis.call('exists', key) == 0 then
  redis.call('hset', key, owner, 1)
  redis.call('pexpire', key, lease)
  -- Above every token minted for the name, whoever held the lock before (see mintCounted).
  return met({1, mintCounted(fence, retention)})
elseif redis.call('hexists', key, owner) == 1 then
  redis.call('hincrby', key, owner, 1)
  -- A reentry may extend the lease but never shortens what the outer hold was given.
  if redis.call('pttl', key) < lease then redis.call('pexpire', key, lease) end
  -- Only the holder's first acquisition minted a token since it took the key, so the
  -- counter still holds that token: a reentry returns the same one.
  redis.call('pexpire', fence, retention)
  return met({1, tonumber(redis.call('get', fence) or '0')})
end
return met({0, redis.call('pttl', key), tonumber(redis.call('get', fence) or '0')})
