-- The lock and the fair lock: take the lock, or reenter it, or take up a grant a
-- release made this wait; refused, a waiting caller joins the queue (or heartbeats its
-- place). See _queue.lua.
-- KEYS[1] lock hash, KEYS[2] fencing counter, KEYS[3] queue, KEYS[4] deadlines,
-- KEYS[5] tickets.
-- ARGV[1] owner, ARGV[2] lease ms, then what the caller leaves off at its default (each
-- argument costs the client; an uncontended lock() sends the first two): ARGV[3] the
-- wait's id ('' or absent: one attempt, never joins), ARGV[4] heartbeat lease ms (a
-- waiter's place lives that long after its last attempt; absent: HEARTBEAT), ARGV[5] key
-- retention ms (the counter's TTL; absent: RETENTION), ARGV[6] 'spublish' to publish
-- sharded (absent or 'publish'), ARGV[7] '0' when the head must be woken rather than
-- granted (syncReplicas; absent: '1').
-- The wake-up channel is KEYS[1]..':next' (LockKeys.wakeChannel).
-- Returns {1, token} when held, {1, token, pttl} when this takes up a grant (its lease
-- runs from the grant: the caller counts only what is left of it), {0, pttl, isHead,
-- counter} otherwise: counter, the name's last token, dates the refusal for a grant
-- that comes in a message (engine/waits.ts).

-- One more level of the lock `owner` holds. A reentry may extend the lease but never
-- shortens what the outer hold was given; the counter still holds the outer hold's
-- token: a reentry returns the same one.
local function reenter(lock, fence, owner, lease, retention)
  redis.call('hincrby', lock, owner, 1)
  if redis.call('pttl', lock) < lease then redis.call('pexpire', lock, lease) end
  redis.call('pexpire', fence, retention)
  return {1, tonumber(redis.call('get', fence) or '0')}
end

-- Nobody queued and no ticket left (the uncontended calls): a free lock is taken without
-- pruning the queue (only the mint reads the clock), and one the caller holds is
-- reentered (no grant can wait to be taken up), before the queue's functions are made
-- (see scripts/embed-lua.mjs). A ticket left (a grant's mark that outlived its grant)
-- goes the long way, which drops the owner's: a mark stands only for a level its grant gave.
local present = redis.call('exists', KEYS[1], KEYS[3], KEYS[5])
if present == 0 then
  redis.call('hset', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, mint(KEYS[2], tonumber(ARGV[5]) or RETENTION)}
end
if present == 1 and redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  return reenter(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[5]) or RETENTION)
end
-- @preludes: the queue's (_queue.lua), for every other call.

local q = {lock = KEYS[1], fence = KEYS[2], queue = KEYS[3], deadlines = KEYS[4], tickets = KEYS[5],
  channel = KEYS[1] .. ':next', how = ARGV[6] or 'publish', retention = tonumber(ARGV[5]) or RETENTION}
local owner, lease, wait, heartbeat = ARGV[1], tonumber(ARGV[2]), ARGV[3] or '', tonumber(ARGV[4]) or HEARTBEAT

local now = clock()
prune(q, now)

-- With one key of the three (present == 1) the head has found the caller holding nothing.
if present > 1 and redis.call('hexists', q.lock, owner) == 1 then
  -- A release granted this wait the lock and its message has not been read: the grant,
  -- not another level.
  local granted = takeUp(q, owner, wait)
  if granted then
    return {1, tonumber(granted), redis.call('pttl', q.lock)}
  end
  return reenter(q.lock, q.fence, owner, lease, q.retention)
end

local head = redis.call('lindex', q.queue, 0)
-- What is left of the holder's lease (the refusal says it); -2: the lock is free.
local pttl = redis.call('pttl', q.lock)
if pttl == -2 then
  if not head or head == owner then
    redis.call('hdel', q.tickets, owner)
    redis.call('hset', q.lock, owner, 1)
    redis.call('pexpire', q.lock, lease)
    -- Taken before it leaves the queue: a new head finds the lock held, not free.
    if redis.call('zscore', q.deadlines, owner) then dequeue(q, owner, head, true) end
    return {1, mint(q.fence, q.retention)}
  end
  -- Free, and someone else heads the queue: the lock is the head's. Granted, it leaves
  -- the queue, whose new head may be the caller (its refusal says so: a head asks again
  -- when the holder's lease ends).
  grantHead(q, head, now, ARGV[7] ~= '0')
  pttl = redis.call('pttl', q.lock)
  head = redis.call('lindex', q.queue, 0)
end

if wait ~= '' then head = enqueue(q, owner, head, wait .. ' ' .. lease .. ' ' .. now, heartbeat, now) end
return {0, pttl, head == owner and 1 or 0, tonumber(redis.call('get', q.fence) or '0')}
