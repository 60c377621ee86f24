-- Quorum mode's acquire on one of the masters (one master or a Cluster use
-- queue-acquire.lua): take the lock for ARGV[1] when the key is free, or reenter when
-- ARGV[1] already holds it. Waiters wait in their own client (no queue spans masters).
-- KEYS[1] lock hash (owner -> count), KEYS[2] fencing counter.
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] key retention ms (the counter's TTL; absent:
-- RETENTION). Callers leave a trailing default off: each argument costs both the client
-- and the server.
-- Returns {1, token} when held, {0, pttl, counter} otherwise: the counter lets quorum
-- mode raise lagging masters' counters.
local key, fence, owner, lease = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])
local retention = tonumber(ARGV[3]) or RETENTION
if redis.call('exists', key) == 0 then
  redis.call('hset', key, owner, 1)
  redis.call('pexpire', key, lease)
  -- Above every token minted for the name, whoever held the lock before (see mint).
  return {1, mint(fence, retention)}
elseif redis.call('hexists', key, owner) == 1 then
  redis.call('hincrby', key, owner, 1)
  -- A reentry may extend the lease but never shortens what the outer hold was given.
  if redis.call('pttl', key) < lease then redis.call('pexpire', key, lease) end
  -- Only the holder's first acquisition minted a token since it took the key, so the
  -- counter still holds that token: a reentry returns the same one.
  redis.call('pexpire', fence, retention)
  return {1, tonumber(redis.call('get', fence) or '0')}
end
return {0, redis.call('pttl', key), tonumber(redis.call('get', fence) or '0')}
