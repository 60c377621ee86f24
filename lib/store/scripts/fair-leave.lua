-- Fair lock: a waiter that gives up (timeout, abort, close) leaves the queue at once;
-- if the lock is free, the new head is told it is its turn.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] waiter deadlines.
-- ARGV[1] owner, ARGV[2] wake-up channel, ARGV[3] 'publish' or 'spublish'.
local lock, queue, deadlines, owner = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
redis.call('lrem', queue, 0, owner)
redis.call('zrem', deadlines, owner)
local head = redis.call('lindex', queue, 0)
if not head then
  redis.call('del', queue, deadlines)
elseif redis.call('exists', lock) == 0 then
  wakeOwner(ARGV[2], head, ARGV[3])
end
return 1
