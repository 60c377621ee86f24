-- Drop one level of ARGV[1]'s hold. At zero, either hand the lock straight to the
-- next waiter of the same client (ARGV[4], lease ARGV[5]) or delete it and wake the
-- waiters. KEYS[1] lock hash, KEYS[2] fencing counter.
-- ARGV[1] owner, ARGV[2] channel, ARGV[3] 'publish' or 'spublish',
-- ARGV[4] next owner or '', ARGV[5] next owner's lease ms,
-- ARGV[6] '' or the releasing client's own subscriptions to the channel: when given,
-- the hand-off is skipped if other clients wait (subscribers beyond our own), so a
-- busy process cannot keep the lock among its own waiters forever.
-- ARGV[7] levels the client holds before this release (1 for the last).
-- ARGV[8] key retention ms (the counter's TTL when a hand-off mints a token).
-- Returns {0} not held, {1, count} still held, {2, receivers} released (receivers of
-- the wake-up message), {3, token} handed off.
local key, fence, owner = KEYS[1], KEYS[2], ARGV[1]
local held = tonumber(redis.call('hget', key, owner) or '0')
if held == 0 then return {0} end
-- Fewer levels than the client holds: this release ran already and its reply was
-- lost with the connection (ioredis resent it). A second decrement could free the
-- lock under an owner that still holds a level.
if held < tonumber(ARGV[7]) then return {1, held} end
local count = redis.call('hincrby', key, owner, -1)
if count > 0 then return {1, count} end
local handOff = ARGV[4] ~= ''
if handOff and ARGV[6] ~= '' then
  local numsub = redis.pcall('pubsub', ARGV[3] == 'spublish' and 'shardnumsub' or 'numsub', ARGV[2])
  if type(numsub) == 'table' and numsub[2] and tonumber(numsub[2]) > tonumber(ARGV[6]) then handOff = false end
end
if handOff then
  -- One round trip, no publish and no window for a re-grab: the waiter owns it now.
  redis.call('hdel', key, owner)
  redis.call('hset', key, ARGV[4], 1)
  redis.call('pexpire', key, tonumber(ARGV[5]))
  return {3, mint(fence, tonumber(ARGV[8]))}
end
redis.call('del', key)
return {2, notify(ARGV[2], 'released', ARGV[3])}
