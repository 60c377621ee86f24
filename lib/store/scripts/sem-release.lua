-- Semaphore: give back id's permits (see _semPrune.lua for the keys) and wake the
-- waiters that fit now. KEYS[1] H, KEYS[2] Z, KEYS[3] Q, KEYS[4] D.
-- ARGV[1] id, ARGV[2] levels the client holds before this call (1 for a permit's
-- release; more for a give-back of a duplicate grant), ARGV[3] wake-up channel,
-- ARGV[4] 'publish' or 'spublish'.
-- Returns {0} not held, {1, levels} one level dropped (or already applied), {2} released.
local H, Z, Q, D, id = KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1]
semPrune(H, Z, Q, D, semNow())
local v = redis.call('hget', H, id)
if not v then return {0} end
local p, l = semParse(v)
-- Fewer levels than the client counts: this call already ran (a resend whose first
-- reply was lost), as in release.lua.
if l < tonumber(ARGV[2]) then return {1, l} end
if l > 1 then
  redis.call('hset', H, id, p .. ',' .. (l - 1))
  return {1, l - 1}
end
redis.call('hdel', H, id)
redis.call('zrem', Z, id)
redis.call('hincrby', H, 'used', -p)
semWake(H, Z, Q, D, ARGV[3], ARGV[4])
return {2}
