-- A multi-lock's names taken in one call, all or none: each is taken only when every
-- one is free with nobody queued and no ticket left (queue-acquire.lua's uncontended
-- case, name by name). Otherwise nothing changes and the client takes the names one at
-- a time, waiting on each in its queue (primitives/multi/take.ts).
-- KEYS per name, 4 each: lock hash, fencing counter, queue, tickets.
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] key retention ms (absent: RETENTION).
-- Returns {1, token per name} when all are held, {0} when none was taken.
local owner, lease = ARGV[1], tonumber(ARGV[2])
local retention = tonumber(ARGV[3]) or RETENTION
for i = 1, #KEYS, 4 do
  -- A lock held by this owner alone is this call's own first run (the client resent it
  -- after a reconnect; it sends the call only when it holds none of the names): taken
  -- again, at one level, so that the resend answers as the first run did.
  if redis.call('exists', KEYS[i], KEYS[i + 2], KEYS[i + 3]) ~= 0
    and not (redis.call('exists', KEYS[i + 2], KEYS[i + 3]) == 0 and redis.call('hexists', KEYS[i], owner) == 1) then
    return {0}
  end
end
local out = {1}
for i = 1, #KEYS, 4 do
  redis.call('hset', KEYS[i], owner, 1)
  redis.call('pexpire', KEYS[i], lease)
  out[#out + 1] = mint(KEYS[i + 1], retention)
end
return out
