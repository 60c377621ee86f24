-- Shared prelude (release.lua, release-to.lua; named to sort after _waiting.lua, whose
-- functions it calls): drop one level of `owner`'s hold of the lock hash `key`. At
-- zero, either hand the lock straight to `nextOwner` (a waiter of the same client,
-- lease `nextLease`, a token minted in `fence` with `retention`), or delete it and wake
-- the client whose turn it is (see _waiting.lua). `me` is the releasing client's id on
-- the waiting list `waiting`/`alive` ('' for none: every waiter is woken by
-- 'released'); `levels` what the client holds before this release (1 for the last);
-- `eager` wakes the head even though its turn has not come (release.lua ARGV[5]).
-- Returns {0} not held, {1, count} still held, {2, receivers, deferred} released
-- (receivers of the wake-up message; deferred 1 when nobody was woken because the
-- head's turn has not come: see waiting-wake.lua), {3, token} handed off.
local function releaseLevel(key, waiting, alive, fence, owner, me, levels, how, nextOwner, nextLease, retention, eager)
  local channel = key .. ':ch'
  local held = tonumber(redis.call('hget', key, owner) or '0')
  if held == 0 then return {0} end
  -- Fewer levels than the client holds: this release ran already and its reply was
  -- lost with the connection (ioredis resent it). A second decrement could free the
  -- lock under an owner that still holds a level.
  if held < levels then return {1, held} end
  -- The last level: nothing to decrement, the key (or the owner's field) goes below.
  if held > 1 then return {1, redis.call('hincrby', key, owner, -1)} end
  local entry = ENTRY_LEASE
  if me == '' then
    redis.call('del', key)
    return {2, notify(channel, 'released', how)}
  end
  -- Clients wait: is the head's turn over? Only then, or when asked to wake the head
  -- anyway (eager), is the list read.
  local waits = redis.call('exists', waiting) == 1
  local over, head = false, nil
  if waits then
    local now = clock()
    over = turnLeft(alive, now) <= 0
    if over or eager then head = headOf(waiting, alive, entry, now) end
  end
  -- Another client's turn has come: it goes first, even before our own next waiter,
  -- which takes the lock ahead of it otherwise (within its turn, as anyone may).
  local theirs = head and head ~= me and over
  if nextOwner and not theirs then
    -- One round trip, no publish and no window for a re-grab: the waiter owns it now.
    redis.call('hdel', key, owner)
    redis.call('hset', key, nextOwner, 1)
    redis.call('pexpire', key, nextLease)
    if waits then served(waiting, alive, entry, me, channel, how) end
    return {3, mint(fence, retention)}
  end
  redis.call('del', key)
  if head and (theirs or head == me or eager) then return {2, wakeClient(channel, head, how), 0} end
  -- A head whose turn still runs knows when it ends and retries then; the releasing
  -- client wakes it sooner if it does not take the lock again at once.
  return {2, 0, (waits and not over) and 1 or 0}
end
