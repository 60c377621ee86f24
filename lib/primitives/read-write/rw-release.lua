-- Read-write lock: drop one level of an owner's read ('r') or write ('w') hold. At zero
-- the hold goes; waiters that may now get in are woken with '*' on their side's channel
-- (a writer's release frees both sides; the last reader's frees the writers).
-- KEYS[1] W, KEYS[2] R, KEYS[3] E, KEYS[4] Q, KEYS[5] D (see rwnow's prelude).
-- ARGV[1] owner, ARGV[2] 'r' or 'w', ARGV[3] levels the client holds before this
-- release (1 for the last), ARGV[4] read channel, ARGV[5] write channel,
-- ARGV[6] 'publish' or 'spublish'.
-- Returns {0} not held, {1, count} still held, {2, 0} released.
local W, R, E, Q, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, mode = ARGV[1], ARGV[2]
local now = rwnow()
local wakeReaders = rwprune(R, E, Q, D, now)
local wakeWriters = wakeReaders
local hash = mode == 'r' and R or W
local result
local held = tonumber(redis.call('hget', hash, owner) or '0')
if held == 0 then
  result = {0}
elseif held < tonumber(ARGV[3]) then
  -- Already applied, its reply lost with the connection (see release.lua).
  result = {1, held}
else
  local count = redis.call('hincrby', hash, owner, -1)
  if count > 0 then
    result = {1, count}
  else
    if mode == 'r' then
      redis.call('hdel', R, owner)
      redis.call('zrem', E, owner)
      rwexpire(R, E, now)
      wakeWriters = wakeWriters or redis.call('exists', R) == 0
    else
      redis.call('del', W)
      wakeReaders, wakeWriters = true, true
    end
    result = {2, 0}
  end
end
if redis.call('exists', Q) == 1 then
  if wakeReaders then notify(ARGV[4], '*', ARGV[6]) end
  if wakeWriters then notify(ARGV[5], '*', ARGV[6]) end
end
return result
