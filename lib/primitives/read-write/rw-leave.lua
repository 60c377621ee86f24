-- Read-write lock: a waiter that gives up (timeout, abort, close) leaves the queue at
-- once. Those behind it may now go (a writer's entry held readers back; any head holds
-- the writers back): every waiter is woken to look again.
-- KEYS[1] Q, KEYS[2] D (see rwnow's prelude). ARGV[1] the entry ('r:' or 'w:' .. owner),
-- ARGV[2] read channel, ARGV[3] write channel, ARGV[4] 'publish' or 'spublish'.
local Q, D, entry = KEYS[1], KEYS[2], ARGV[1]
redis.call('lrem', Q, 0, entry)
redis.call('zrem', D, entry)
if redis.call('llen', Q) == 0 then
  redis.call('del', Q, D)
else
  notify(ARGV[2], '*', ARGV[4])
  notify(ARGV[3], '*', ARGV[4])
end
return 1
