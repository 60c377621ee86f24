-- Read-write lock: one attempt at the read side ('r') or the write side ('w') for an
-- owner, or the take-up of a grant a release made this wait; refused, a waiting caller
-- joins the queue (or heartbeats its place). See _rwqueue.lua.
-- KEYS[1] W, KEYS[2] R, KEYS[3] E, KEYS[4] fencing counter, KEYS[5] queue,
-- KEYS[6] deadlines, KEYS[7] tickets.
-- ARGV[1] owner, ARGV[2] 'r' or 'w', ARGV[3] lease ms, ARGV[4] waiter heartbeat lease ms,
-- ARGV[5] the wait's id ('' for one attempt: never joins), ARGV[6] read channel,
-- ARGV[7] write channel, ARGV[8] 'publish' or 'spublish', ARGV[9] key retention ms.
-- Returns {1, token} when held, {1, token, pttl} when this takes up a grant (the lease
-- left of it); {0, pttl, next, stamp} when refused: pttl of the hold that blocks the
-- caller, next 1 when no waiter blocks it (only holds do), stamp the name's last
-- grant's (see _rwqueue.lua).
--
-- Who gets in:
--   read:  an owner that already reads (reentry) or writes (its own scope) at once: a
--          waiting writer must never block a hold its own owner's release depends on.
--          Anyone else when no other owner writes and no writer waits ahead of the
--          caller's place in the queue (its entry, or the end): once a writer waits, new
--          readers queue behind it (no writer starvation); readers queued before it go first.
--   write: the owner that writes (reentry) at once. Anyone else when no other owner
--          holds W or R, and the queue is empty or the caller heads it.
-- A read's token is the counter as it is (the last writer's token, 0 if none is
-- known); a write mints one.
local q = {W = KEYS[1], R = KEYS[2], E = KEYS[3], fence = KEYS[4], queue = KEYS[5], deadlines = KEYS[6], tickets = KEYS[7],
  rch = ARGV[6], wch = ARGV[7], how = ARGV[8], retention = tonumber(ARGV[9])}
local owner, mode, lease, heartbeat, wait = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local now = clock()
local dropped = rwPrune(q, now)
local hash = mode == 'r' and q.R or q.W

-- A release granted this wait the hold and its message has not been read: the grant, not
-- another level. A mark whose hold is gone (expired) stands for nothing.
local mark = takeUp(q, owner, wait)
if mark then
  if redis.call('hexists', hash, owner) == 1 then
    local left = mode == 'r' and tonumber(redis.call('zscore', q.E, owner)) - now or redis.call('pttl', q.W)
    return {1, tonumber(string.match(mark, '^(%d+)')), math.max(0, left)}
  end
end

-- Held: the caller's place in the queue (if it waited) goes. Nobody behind it is freed by
-- that: a reader's place blocks no reader, a writer's now holds W.
local function held(token)
  if redis.call('zscore', q.deadlines, owner) then
    redis.call('hdel', q.tickets, owner)
    dequeue(q, owner)
  end
  if dropped then rwGrant(q, now) end
  return {1, token}
end

local pttl, nextUp = -2, 1
if mode == 'r' then
  local blocked = false
  if redis.call('hexists', q.R, owner) == 0 and redis.call('hexists', q.W, owner) == 0 then
    if redis.call('exists', q.W) == 1 then
      blocked, pttl = true, redis.call('pttl', q.W)
    end
    for _, other in ipairs(redis.call('lrange', q.queue, 0, -1)) do
      if other == owner then break end
      if rwSide(q, other) ~= 'r' then
        blocked, nextUp = true, 0
        break
      end
    end
  end
  if not blocked then
    rwRead(q, owner, lease, now)
    return held(rwCurrent(q))
  end
else
  if redis.call('hexists', q.W, owner) == 1 then
    redis.call('hincrby', q.W, owner, 1)
    if redis.call('pttl', q.W) < lease then redis.call('pexpire', q.W, lease) end
    return {1, rwCurrent(q)}
  end
  local blocked = false
  if redis.call('exists', q.W) == 1 then
    blocked, pttl = true, redis.call('pttl', q.W)
  elseif redis.call('hlen', q.R) - redis.call('hexists', q.R, owner) > 0 then
    -- The first other reader's lease to run out: the caller looks again then.
    blocked, pttl = true, redis.call('pttl', q.R)
    local first = redis.call('zrange', q.E, 0, 1, 'withscores')
    for i = 1, #first, 2 do
      if first[i] ~= owner then
        pttl = math.max(0, tonumber(first[i + 1]) - now)
        break
      end
    end
  end
  local head = redis.call('lindex', q.queue, 0)
  if head and head ~= owner then blocked, nextUp = true, 0 end
  if not blocked then
    redis.call('hset', q.W, owner, 1)
    redis.call('pexpire', q.W, lease)
    return held(mint(q.fence, q.retention))
  end
end

if wait ~= '' then
  enqueue(q, owner, redis.call('lindex', q.queue, 0), wait .. ' ' .. lease .. ' ' .. now .. ' ' .. mode, heartbeat, now)
end
-- The stamp before any grant below: a grant made to the caller now dates after it.
local stamp = tonumber(redis.call('hget', q.tickets, '#stamp') or '0')
if dropped then rwGrant(q, now) end
return {0, pttl, nextUp, stamp}
