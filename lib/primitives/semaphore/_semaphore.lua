-- Shared prelude of the semaphore's scripts, whose waiters wait on the queue of
-- _queue.lua (of permit ids; tickets 'wait lease at permits'). Its other keys:
--   sem      hash: 'limit', 'used', 'stamp' (semGrant), and permit id (an owner id: it
--            has a ':') -> "<permits>,<levels>" (levels: grants Redis counts, sem-release.lua);
--   expiry   sorted set: permit id -> expiry (server ms).
-- 'used' sums the permits in sem, each of which is in expiry unless expiry expired: the
-- two share one TTL (semKeep), at least every expiry in it.
-- `q` is {sem, expiry, queue, deadlines, tickets, channel, how}.

local function semParse(v)
  local p, l = string.match(v, '^(%d+),(%d+)$')
  return tonumber(p), tonumber(l)
end

-- sem and expiry live at least `ms` more, and always as long as each other.
local function semKeep(q, ms)
  local ttl = math.max(redis.call('pttl', q.sem), redis.call('pttl', q.expiry), ms)
  redis.call('pexpire', q.sem, ttl)
  redis.call('pexpire', q.expiry, ttl)
end

-- `id` holds `permits` (one level) under `lease` from `now`.
local function semHold(q, id, permits, lease, now)
  redis.call('hset', q.sem, id, permits .. ',1')
  redis.call('hincrby', q.sem, 'used', permits)
  redis.call('zadd', q.expiry, now + lease, id)
  semKeep(q, lease)
end

-- `id`'s permits go back, whatever its levels, and its grant's mark with them.
local function semDrop(q, id)
  local v = redis.call('hget', q.sem, id)
  if v then redis.call('hincrby', q.sem, 'used', -semParse(v)) end
  redis.call('hdel', q.sem, id)
  redis.call('zrem', q.expiry, id)
  redis.call('hdel', q.tickets, id)
end

-- Drops expired permits and dead waiters; true when some were: waiters may fit now.
local function semPrune(q, now)
  local dropped = prune(q, now) > 0
  local expired = redis.call('zrangebyscore', q.expiry, '-inf', now)
  -- expiry expired, so every permit in sem has.
  local gone = redis.call('exists', q.expiry) == 0 and tonumber(redis.call('hget', q.sem, 'used') or '0') > 0
  if gone then expired = redis.call('hkeys', q.sem) end
  for _, id in ipairs(expired) do
    if string.find(id, ':', 1, true) then
      semDrop(q, id)
      dropped = true
    end
  end
  if gone then redis.call('hset', q.sem, 'used', 0) end
  return dropped or gone
end

-- The permits the queued waiter `id` asks for (nil: no ticket).
local function semWant(q, id)
  return tonumber(string.match(redis.call('hget', q.tickets, id) or '', ' (%d+)$'))
end

-- Grants (grantTo), in arrival order, each waiter at the head whose permits fit, up to
-- the first that does not: no later one passes it (one woken instead keeps its share).
-- Deletes an unused semaphore. Returns the grants' messages.
local function semGrant(q, now)
  local limit = tonumber(redis.call('hget', q.sem, 'limit') or '0')
  local used = tonumber(redis.call('hget', q.sem, 'used') or '0')
  local queue = redis.call('lrange', q.queue, 0, -1)
  if #queue == 0 and used <= 0 then redis.call('del', q.sem, q.expiry, q.tickets) end
  local grants = {}
  for _, id in ipairs(queue) do
    local want = semWant(q, id) or limit + 1
    used = used + want
    if used > limit then break end
    grants[#grants + 1] = grantTo(q, id, now, function(lease)
      semHold(q, id, want, lease, now)
      if redis.call('pttl', q.tickets) < lease then redis.call('pexpire', q.tickets, lease) end
      -- The token: a stamp above every one before on the name (afresh, the server's clock
      -- in us, as _mint.lua's), so a wait takes a message up only if it came after its last
      -- refusal, which carries the last stamp (engine/waits.ts).
      local stamp = redis.call('hincrby', q.sem, 'stamp', 1)
      if stamp > 1 then return string.format('%.0f', stamp) end
      local t = redis.call('time')
      stamp = t[1] .. string.format('%06d', tonumber(t[2]))
      redis.call('hset', q.sem, 'stamp', stamp)
      return stamp
    end)
  end
  return grants
end
