-- Read-write lock: one attempt at the read side ('r') or the write side ('w') for an
-- owner. KEYS[1] W, KEYS[2] R, KEYS[3] E, KEYS[4] fencing counter, KEYS[5] Q, KEYS[6] D
-- (see rwnow's prelude). ARGV[1] owner, ARGV[2] 'r' or 'w', ARGV[3] lease ms,
-- ARGV[4] waiter heartbeat lease ms, ARGV[5] '1' to join (or stay in) the queue when
-- refused, '0' for one attempt, ARGV[6] read channel, ARGV[7] write channel (their
-- waiters are woken by '*'), ARGV[8] 'publish' or 'spublish', ARGV[9] key retention ms.
-- Returns {1, token} when held; {0, pttl, next} when refused: pttl of the hold that
-- blocks the caller, next 1 when no waiter is ahead of it (only holds block it).
--
-- Who gets in:
--   read:  an owner that already reads (reentry) or writes (its own scope) at once: a
--          waiting writer must never block a hold its own owner's release depends on.
--          Anyone else when no other owner writes and no writer waits ahead of the
--          caller's place in Q (its entry, or the end): once a writer waits, new readers
--          queue behind it (no writer starvation); readers queued before it go first.
--   write: the owner that writes (reentry) at once. Anyone else when no other owner
--          holds W or R, and Q is empty or the caller heads it.
-- A read's token is the counter as it is (the last writer's token, 0 if none is
-- known); a write mints one.
local W, R, E, fence, Q, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner, mode, lease, beat, retention = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[9])
local now = rwnow()
if rwprune(R, E, Q, D, now) then
  notify(ARGV[6], '*', ARGV[8])
  notify(ARGV[7], '*', ARGV[8])
end
local entry = mode .. ':' .. owner

-- A grant takes the caller's entry out of the queue (if it waited). Nobody behind it is
-- freed by that: a reader's entry blocks nobody, a writer's now holds W.
local function granted(token)
  if redis.call('zrem', D, entry) == 1 then
    redis.call('lrem', Q, 0, entry)
    if redis.call('llen', Q) == 0 then redis.call('del', Q, D) end
  end
  return {1, token}
end

-- The counter as it is, kept alive as a use of the name (0 when none is known).
local function current()
  if redis.call('pexpire', fence, retention) == 0 then return 0 end
  return tonumber(redis.call('get', fence))
end

local pttl, nextUp = -2, 1
if mode == 'r' then
  local mine = redis.call('hexists', R, owner) == 1 or redis.call('hexists', W, owner) == 1
  local blocked = false
  if not mine then
    if redis.call('exists', W) == 1 then
      blocked, pttl = true, redis.call('pttl', W)
    end
    for _, e in ipairs(redis.call('lrange', Q, 0, -1)) do
      if e == entry then break end
      if string.sub(e, 1, 1) == 'w' then
        blocked, nextUp = true, 0
        break
      end
    end
  end
  if not blocked then
    redis.call('hincrby', R, owner, 1)
    -- A reentry may extend the reader's lease but never shortens it.
    if now + lease > tonumber(redis.call('zscore', E, owner) or '0') then redis.call('zadd', E, now + lease, owner) end
    rwexpire(R, E, now)
    return granted(current())
  end
else
  if redis.call('hexists', W, owner) == 1 then
    redis.call('hincrby', W, owner, 1)
    if redis.call('pttl', W) < lease then redis.call('pexpire', W, lease) end
    return {1, current()}
  end
  local blocked = false
  if redis.call('exists', W) == 1 then
    blocked, pttl = true, redis.call('pttl', W)
  elseif redis.call('hlen', R) - redis.call('hexists', R, owner) > 0 then
    -- The first other reader's lease to run out: the caller looks again then.
    blocked, pttl = true, redis.call('pttl', R)
    local first = redis.call('zrange', E, 0, 1, 'withscores')
    for i = 1, #first, 2 do
      if first[i] ~= owner then
        pttl = math.max(0, tonumber(first[i + 1]) - now)
        break
      end
    end
  end
  local head = redis.call('lindex', Q, 0)
  if head and head ~= entry then blocked, nextUp = true, 0 end
  if not blocked then
    redis.call('hset', W, owner, 1)
    redis.call('pexpire', W, lease)
    return granted(mint(fence, retention))
  end
end

if ARGV[5] == '1' then
  if not redis.call('zscore', D, entry) then redis.call('rpush', Q, entry) end
  redis.call('zadd', D, now + beat, entry)
  -- The queue outlives its last heartbeat by at most two heartbeat leases.
  for _, k in ipairs({Q, D}) do
    if redis.call('pttl', k) < beat * 2 then redis.call('pexpire', k, beat * 2) end
  end
end
return {0, pttl, nextUp}
