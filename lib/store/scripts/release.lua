-- Drop one level of ARGV[1]'s hold. At zero, either hand the lock straight to the
-- next waiter of the same client (ARGV[5], lease ARGV[6]), or delete it and wake the
-- client whose turn it is (see _waiting.lua).
-- KEYS[1] lock hash, and with a waiting list (none in quorum mode) KEYS[2] waiting
-- clients, KEYS[3] their deadlines, and for a hand-off KEYS[4] the fencing counter.
-- ARGV[1] owner, ARGV[2] the releasing client's id on the waiting list (absent or '':
-- no list, every waiter is woken by 'released'), ARGV[3] levels the client holds
-- before this release (absent: 1, the last), ARGV[4] 'spublish' to publish sharded
-- (absent or 'publish': PUBLISH), and for a hand-off only: ARGV[5] next owner, ARGV[6]
-- its lease ms, ARGV[7] key retention ms (the counter's TTL when the hand-off mints a
-- token; absent: RETENTION). Callers leave trailing defaults off (see acquire.lua).
-- The lock's channel is KEYS[1]..':ch' (LockKeys.channel).
-- Returns {0} not held, {1, count} still held, {2, receivers, deferred} released
-- (receivers of the wake-up message; deferred 1 when nobody was woken because the
-- head's turn has not come: see waiting-wake.lua), {3, token} handed off.
local key, owner, how = KEYS[1], ARGV[1], ARGV[4]
local channel = key .. ':ch'
local held = tonumber(redis.call('hget', key, owner) or '0')
if held == 0 then return {0} end
-- Fewer levels than the client holds: this release ran already and its reply was
-- lost with the connection (ioredis resent it). A second decrement could free the
-- lock under an owner that still holds a level.
if held < (tonumber(ARGV[3]) or 1) then return {1, held} end
-- The last level: nothing to decrement, the key (or the owner's field) goes below.
if held > 1 then return {1, redis.call('hincrby', key, owner, -1)} end
local me, turn, entry = ARGV[2], TURN_MS, ENTRY_LEASE
if not me or me == '' then
  redis.call('del', key)
  return {2, notify(channel, 'released', how)}
end
local head, since, now = headOf(KEYS[2], KEYS[3], entry)
-- Another client's turn has come: it goes first, even before our own next waiter.
local theirs = head and head ~= me and now - since >= turn
if ARGV[5] and not theirs then
  -- One round trip, no publish and no window for a re-grab: the waiter owns it now.
  redis.call('hdel', key, owner)
  redis.call('hset', key, ARGV[5], 1)
  redis.call('pexpire', key, tonumber(ARGV[6]))
  if head then served(KEYS[2], KEYS[3], entry, me, head, turn, channel, how) end
  return {3, mint(KEYS[4], tonumber(ARGV[7]) or RETENTION)}
end
redis.call('del', key)
if head and (theirs or head == me) then return {2, notify(channel, head, how), 0} end
-- A head whose turn has not come yet knows it heads the list and retries then; the
-- releasing client wakes it sooner if it does not take the lock again at once.
return {2, 0, head and 1 or 0}
