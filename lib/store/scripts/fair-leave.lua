-- Fair lock: a waiter that gives up (timeout, abort, close) leaves the queue at once.
-- A grant made to its wait that it never claimed (_passOn.lua) is given back; if the
-- lock is free then, the new head is told it is its turn.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] waiter deadlines, KEYS[4] tickets.
-- ARGV[1] owner, ARGV[2] wake-up channel, ARGV[3] 'publish' or 'spublish', ARGV[4] the
-- wait's id ('' for none).
local lock, queue, deadlines, tickets, owner = KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1]
local wait = ARGV[4] or ''
if wait ~= '' then
  local ticket = redis.call('hget', tickets, owner) or ''
  if string.match(ticket, '^g ' .. wait .. ' %d+$') then
    redis.call('hdel', tickets, owner)
    -- The grant's level (another wait of this owner may hold more).
    if redis.call('hexists', lock, owner) == 1 and redis.call('hincrby', lock, owner, -1) <= 0 then
      redis.call('del', lock)
    end
  elseif string.sub(ticket, 1, #wait + 1) == wait .. ' ' then
    redis.call('hdel', tickets, owner)
  end
end
redis.call('lrem', queue, 0, owner)
redis.call('zrem', deadlines, owner)
local head = redis.call('lindex', queue, 0)
if not head then
  redis.call('del', queue, deadlines)
  if redis.call('exists', lock) == 0 then redis.call('del', tickets) end
elseif redis.call('exists', lock) == 0 then
  wakeOwner(ARGV[2], head, ARGV[3])
end
return 1
