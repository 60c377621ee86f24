-- The lock and the fair lock: a waiter that gives up (timeout, abort, close) leaves the
-- queue at once. A grant made to its wait that it never took up is given back; if the
-- lock is free then, the head is told (see _queue.lua).
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] tickets.
-- ARGV[1] owner, ARGV[2] the wait's id, ARGV[3] 'publish' or 'spublish'. The wake-up
-- channel is KEYS[1]..':next'.
local q = {lock = KEYS[1], queue = KEYS[2], deadlines = KEYS[3], tickets = KEYS[4],
  channel = KEYS[1] .. ':next', how = ARGV[3]}
local owner = ARGV[1]
local head = leave(q, owner, ARGV[2], function()
  -- The grant's level (another wait of this owner may hold more).
  if redis.call('hexists', q.lock, owner) == 1 and redis.call('hincrby', q.lock, owner, -1) <= 0 then
    redis.call('del', q.lock)
  end
end)
if redis.call('exists', q.queue) == 0 then
  if redis.call('exists', q.lock) == 0 then redis.call('del', q.tickets) end
elseif head ~= owner and redis.call('exists', q.lock) == 0 then
  -- The head stays; the free lock (a grant given back) is its to take.
  wakeOwner(q.channel, head, q.how)
end
return 1
