-- Shared prelude: the waiting queue of a lock name, one design for the lock and the fair
-- lock. Its keys share the name's hash tag:
--   queue      list of waiting owners in arrival order, the head first;
--   deadlines  sorted set owner -> heartbeat deadline (server ms): every attempt of a
--              wait moves it, so a waiter whose process died is pruned, a live one never;
--   tickets    hash owner -> its wait's ticket 'wait lease at' (the client's id of the
--              wait, the lease it asks for, server ms of its last attempt), replaced by
--              the grant a release made it, 'g wait token', until it takes it up.
-- A release grants the free lock to the head in the same script (grantHead) and tells
-- that owner alone; no newcomer passes the head (the barging window is 0). The server's
-- clock is the only clock: hosts with skewed clocks neither evict live waiters nor keep
-- dead ones.
-- `q` is {lock, fence, queue, deadlines, tickets, channel, how, retention}.
-- The semaphore's queue: _semaphore.lua.

-- A waiter's heartbeat lease when the call leaves it off: the client's default
-- watchdogTimeout (the client reads it from this source, one constant per line).
local HEARTBEAT = 30000

-- The server's clock in ms (the digits side by side: see _mint.lua).
local function clock()
  local t = timeNow()
  return tonumber(t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000)))
end

-- A new head: with the lock free, it is woken to take it. `head`: the queue's head when
-- the caller has just read it; `locked`: the caller has just given the lock to someone
-- (no need to ask).
local function newHead(q, head, locked)
  head = head or redis.call('lindex', q.queue, 0)
  if not head then return end
  if not locked and q.lock and redis.call('exists', q.lock) == 0 then wakeOwner(q.channel, head, q.how) end
end

-- Waiters whose heartbeat deadline passed (their process died) leave the queue. Returns
-- how many left.
local function prune(q, now)
  local dead = redis.call('zrangebyscore', q.deadlines, '-inf', now)
  if #dead == 0 then return 0 end
  local head = redis.call('lindex', q.queue, 0)
  for _, owner in ipairs(dead) do
    redis.call('lrem', q.queue, 0, owner)
    redis.call('zrem', q.deadlines, owner)
    redis.call('hdel', q.tickets, owner)
  end
  if redis.call('lindex', q.queue, 0) ~= head then newHead(q) end
  return #dead
end

-- `owner` leaves the queue (it holds the lock now, or gave up). The queue's keys go with
-- its last waiter, but for grant marks in tickets, which stand while their owner holds.
-- `head`: the queue's head when the caller has just read it; `locked`: as in newHead.
local function dequeue(q, owner, head, locked)
  head = head or redis.call('lindex', q.queue, 0)
  if head == owner then redis.call('lpop', q.queue) else redis.call('lrem', q.queue, 0, owner) end
  redis.call('zrem', q.deadlines, owner)
  local next = redis.call('lindex', q.queue, 0)
  if not next then
    redis.call('del', q.deadlines)
  elseif head == owner then
    newHead(q, next, locked)
  end
end

-- The client part of an owner id (host:pid:client:), as its channel is named.
local function clientOf(owner)
  return string.match(owner, '^(.*:)') or owner
end

-- `owner`, refused, joins the queue after `head` (nil: empty) or keeps its place, with
-- `ticket`; returns the head. The queue's keys live two heartbeat leases from the last
-- attempt that found less than one and a half left: a waiter's next attempt comes
-- within one lease, so they never expire under a live waiter, and they outlive the last
-- heartbeat by at most two leases (no leak when every waiter dies). The queue and its
-- deadlines are created, emptied and expired together, so one PTTL speaks for both; the
-- tickets may live longer (a read-write or semaphore grant's mark keeps its lease).
local function enqueue(q, owner, head, ticket, heartbeat, now)
  if not redis.call('zscore', q.deadlines, owner) then
    redis.call('rpush', q.queue, owner)
    head = head or owner
  end
  redis.call('zadd', q.deadlines, now + heartbeat, owner)
  redis.call('hset', q.tickets, owner, ticket)
  if redis.call('pttl', q.deadlines) < heartbeat * 1.5 then
    redis.call('pexpire', q.queue, heartbeat * 2)
    redis.call('pexpire', q.deadlines, heartbeat * 2)
  end
  if redis.call('pttl', q.tickets) < heartbeat * 1.5 then redis.call('pexpire', q.tickets, heartbeat * 2) end
  return head
end

-- Takes up the grant made to `owner`'s wait `wait` while it stands untaken (its mark
-- goes): returns what the grant's message carried after the wait id (the primitive's
-- token), or nil when no grant stands.
local function takeUp(q, owner, wait)
  if wait == '' then return nil end
  local mark = string.match(redis.call('hget', q.tickets, owner) or '', '^g ' .. wait .. ' (.+)$')
  if mark then redis.call('hdel', q.tickets, owner) end
  return mark
end

-- `owner`'s wait `wait` gives up (timeout, abort, close) and leaves the queue at once: a
-- grant made to it and never taken up is given back (`giveBack()` drops the level the
-- grant made), and its ticket goes. Returns the queue's head before it left.
local function leave(q, owner, wait, giveBack)
  if takeUp(q, owner, wait) then
    giveBack()
  elseif string.sub(redis.call('hget', q.tickets, owner) or '', 1, #wait + 1) == wait .. ' ' then
    redis.call('hdel', q.tickets, owner)
  end
  local head = redis.call('lindex', q.queue, 0)
  if head == owner or redis.call('zscore', q.deadlines, owner) then dequeue(q, owner, head) end
  return head
end

-- Grants the queued `owner` what its ticket asks for: `give(lease)` makes the primitive's
-- hold and returns its token; the ticket becomes the grant's mark, and 'owner wait token'
-- goes to the owner's client channel (the releasing client also hands it to its own wait
-- from the reply). Woken to ask instead: an owner with no `give` (no grant allowed), or
-- whose ticket is older than half its lease (too little of it would be left). Returns the
-- message. `ticket`: the owner's ticket when the caller has just read it; `head`: the
-- queue's head, when the caller knows it (a grant loop that woke an owner ahead of this
-- one does not: that owner still heads the queue).
local function grantTo(q, owner, now, give, ticket, head)
  local wait, lease, at = string.match(ticket or redis.call('hget', q.tickets, owner) or '', '^(w%w+) (%d+) (%d+)')
  if not give or not wait or now - tonumber(at) > tonumber(lease) / 2 then
    wakeOwner(q.channel, owner, q.how)
    return nil
  end
  local token = give(tonumber(lease))
  redis.call('hset', q.tickets, owner, 'g ' .. wait .. ' ' .. token)
  dequeue(q, owner, head, true)
  local message = owner .. ' ' .. wait .. ' ' .. token
  notify(q.channel .. ':' .. clientOf(owner), message, q.how)
  return message
end

-- Gives the free lock to the head and mints its token (grantTo). Not `allowed` with
-- syncReplicas: WAIT must follow a grant, which only the grantee's own call can send.
local function grantHead(q, head, now, allowed)
  return grantTo(q, head, now, allowed and function(lease)
    redis.call('hset', q.lock, head, 1)
    redis.call('pexpire', q.lock, lease)
    return string.format('%.0f', mint(q.fence, q.retention))
  end, nil, head)
end
