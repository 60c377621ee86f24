-- Read-write lock: delete one side whoever holds it ('r': every read hold, 'w': the
-- write hold), tell its holders (their holds are lost at once, not at their next
-- renewal) and wake every waiter (each asks again). The fencing counter stays.
-- KEYS[1] W, KEYS[2] R, KEYS[3] E, KEYS[4] Q (see _rwqueue.lua).
-- ARGV[1] 'r' or 'w', ARGV[2] read channel, ARGV[3] write channel, ARGV[4] 'publish' or
-- 'spublish', ARGV[5] holder channel prefix, ARGV[6] the side's hold id in clients.
-- Returns 1 when a hold was deleted, 0 when there was none.
local W, R, E, Q = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
tellHolders(ARGV[1] == 'r' and R or W, ARGV[5], 'deleted', ARGV[6])
local deleted
if ARGV[1] == 'r' then
  deleted = redis.call('exists', R) == 1
  redis.call('del', R, E)
else
  deleted = redis.call('del', W) == 1
end
if deleted and redis.call('exists', Q) == 1 then
  notify(ARGV[2], '*', ARGV[4])
  notify(ARGV[3], '*', ARGV[4])
end
return deleted and 1 or 0
