-- Shared prelude of the semaphore's scripts, whose waiters wait on the queue of
-- _queue.lua (of permit ids; tickets 'wait lease at permits'). Its other keys:
--   sem      hash: 'limit', 'used' (the sum of the permits of its ids), 'stamp'
--            (semGrant), 'keep' (server ms that sem and expiry are known to live to), and
--            permit id (an owner id: it has a ':') -> "<permits>,<levels>" (levels:
--            grants Redis counts, sem-release.lua);
--   expiry   sorted set: permit id -> expiry (server ms).
-- Each script reads sem's fields once (semRead) into a state `s`, keeps 'used' and
-- 'stamp' in it as it goes, and writes them back in one HSET (semWrite): a call costs
-- a few commands, not one per field. Invariants: every id in sem has its permits in
-- 'used' and its expiry in expiry; expiry has members exactly while 'used' > 0; sem
-- and expiry live to 'keep' at least, which is at least every expiry in expiry (so
-- neither outlives the other's meaning, and a crashed holder's keys go within two of
-- its leases), and both are gone once nothing is held or queued.
-- `q` is {sem, expiry, queue, deadlines, tickets, channel, how}.

local function semParse(v)
  local p, l = string.match(v, '^(%d+),(%d+)$')
  return tonumber(p), tonumber(l)
end

-- The semaphore's fields, and the value of `id` in it (nil: it holds nothing, or no id).
local function semRead(q, id)
  local f = redis.call('hmget', q.sem, 'limit', 'used', 'stamp', 'keep', id or 'limit')
  -- A missing field: false in Redis, another value in ioredis-mock's Lua (fengari).
  local v = f[5]
  if type(v) ~= 'string' or not id then v = nil end
  return {limit = tonumber(f[1]), used = tonumber(f[2]) or 0, stamp = tonumber(f[3]) or 0,
    keep = tonumber(f[4]) or 0, set = {}, dirty = false, expire = nil}, v
end

-- Writes what changed of sem's fields (s.set; 'used' and 'stamp' with them), then the
-- TTL semKeep asked for (after the write, which may have made sem).
local function semWrite(q, s)
  if s.dirty then
    local args = {'used', s.used, 'stamp', string.format('%.0f', s.stamp)}
    for field, value in pairs(s.set) do
      args[#args + 1] = field
      args[#args + 1] = value
    end
    redis.call('hset', q.sem, unpack(args))
  end
  if s.expire then
    redis.call('pexpire', q.sem, s.expire)
    redis.call('pexpire', q.expiry, s.expire)
  end
end

-- sem and expiry are to live at least `ms` more (`fresh`: expiry was just made, with no
-- TTL yet); set by semWrite. Twice that when extended, so that a stream of calls extends
-- them once a lease, not once a call.
local function semKeep(s, now, ms, fresh)
  if s.keep < now + ms then
    s.keep = now + 2 * ms
    s.set.keep = s.keep
    s.dirty = true
  elseif not fresh then
    return
  end
  s.expire = s.keep - now
end

-- `id` holds `permits` (one level) under `lease` from `now`.
local function semHold(q, s, id, permits, lease, now)
  local fresh = s.used == 0
  s.used = s.used + permits
  s.set[id] = permits .. ',1'
  s.set.limit = s.limit
  s.dirty = true
  redis.call('zadd', q.expiry, now + lease, id)
  semKeep(s, now, lease, fresh)
end

-- `id` (whose value in sem is `v`) gives its permits back, whatever its levels, and its
-- grant's mark with them.
local function semDrop(q, s, id, v)
  if v then s.used = s.used - semParse(v) end
  s.set[id] = nil
  s.dirty = true
  redis.call('hdel', q.sem, id)
  redis.call('zrem', q.expiry, id)
  redis.call('hdel', q.tickets, id)
end

-- Drops expired permits and dead waiters; true when some were: waiters may fit now.
-- Sets s.first, the earliest expiry left (nil: nothing held): read anyway, it says
-- whether any permit expired, and is what a refused head is told (sem-acquire.lua).
local function semPrune(q, s, now)
  local dropped = prune(q, now) > 0
  local first = redis.call('zrange', q.expiry, 0, 0, 'withscores')
  if first[2] and tonumber(first[2]) <= now then
    for _, id in ipairs(redis.call('zrangebyscore', q.expiry, '-inf', now)) do
      semDrop(q, s, id, redis.call('hget', q.sem, id))
    end
    dropped = true
    first = redis.call('zrange', q.expiry, 0, 0, 'withscores')
  end
  s.first = tonumber(first[2])
  return dropped
end

-- The permits a queued waiter's ticket asks for (nil: no ticket).
local function semWant(ticket)
  return tonumber(string.match(ticket or '', ' (%d+)$'))
end

-- The next grant's stamp: above every one before on the name (afresh, the server's
-- clock in us, as _mint.lua's), so a wait takes a message up only if it came after its
-- last refusal, which carries the last stamp (engine/waits.ts).
local function semStamp(s)
  s.stamp = s.stamp > 0 and s.stamp + 1 or clockMicros()
  return string.format('%.0f', s.stamp)
end

-- Grants (grantTo), in arrival order, each waiter at the head whose permits fit, up to
-- the first that does not: no later one passes it (one woken instead keeps its share).
-- Reads no further than that waiter. Deletes an unused semaphore, and writes sem's
-- fields (semWrite). Returns the grants' messages.
local function semGrant(q, s, now)
  local grants = {}
  local reserved, at = s.used, 0
  local limit = s.limit or 0
  while reserved < limit do
    local id = redis.call('lindex', q.queue, at)
    if not id then break end
    local ticket = redis.call('hget', q.tickets, id)
    local want = semWant(ticket) or limit + 1
    if reserved + want > limit then break end
    reserved = reserved + want
    local message = grantTo(q, id, now, function(lease)
      semHold(q, s, id, want, lease, now)
      if redis.call('pttl', q.tickets) < lease then redis.call('pexpire', q.tickets, lease) end
      return semStamp(s)
    end, ticket)
    -- Woken instead, it stays queued, first among those not granted.
    if message then grants[#grants + 1] = message else at = at + 1 end
  end
  if s.used <= 0 and redis.call('exists', q.queue) == 0 then
    redis.call('del', q.sem, q.expiry, q.tickets)
  else
    semWrite(q, s)
  end
  return grants
end
