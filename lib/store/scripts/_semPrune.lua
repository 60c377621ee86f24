-- Shared prelude of the semaphore scripts (put in front of every script that calls
-- semPrune). The semaphore of a name keeps, all under its `{name}` hash tag:
--   H  hash: 'limit' -> the limit, 'used' -> permits held, and per permit id
--      "<permits>,<levels>" (levels: grants of that id Redis counts, see sem-release.lua);
--      permit ids are owner ids, which always contain ':' and so never clash with
--      'limit' or 'used';
--   Z  sorted set: permit id -> expiry (ms, the server's clock);
--   Q  list of waiters "<permits>|<id>", oldest first; D sorted set: the same members ->
--      heartbeat deadline (ms, the server's clock).
-- Invariant: 'used' is the sum of the permits of the ids in H, and every id in H is in
-- Z, except once Z expired: H and Z always get the same TTL (semKeep), at least every
-- expiry in Z, so an absent Z means every permit in H has expired.

-- The server's clock in ms, never a client's.
local function semNow()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Permits and levels of one id's value "<permits>,<levels>".
local function semParse(v)
  local p, l = string.match(v, '^(%d+),(%d+)$')
  return tonumber(p), tonumber(l)
end

-- The permits a queue member "<permits>|<id>" asks for.
local function semWant(member)
  return tonumber(string.match(member, '^(%d+)|'))
end

-- H and Z live at least `ms` more, and always as long as each other.
local function semKeep(H, Z, ms)
  local ttl = math.max(redis.call('pttl', H), redis.call('pttl', Z), ms)
  redis.call('pexpire', H, ttl)
  redis.call('pexpire', Z, ttl)
end

-- Drops expired permits (a crashed holder's come back here) and waiters whose
-- heartbeat stopped. True when something was dropped: waiters may fit now.
local function semPrune(H, Z, Q, D, now)
  local dropped = false
  if redis.call('exists', Z) == 0 and tonumber(redis.call('hget', H, 'used') or '0') > 0 then
    -- Z expired, so every permit in H has: keep only the limit.
    local limit = redis.call('hget', H, 'limit')
    redis.call('del', H)
    if limit then redis.call('hset', H, 'limit', limit, 'used', 0) end
    dropped = true
  end
  for _, id in ipairs(redis.call('zrangebyscore', Z, '-inf', now)) do
    local v = redis.call('hget', H, id)
    if v then
      redis.call('hincrby', H, 'used', -semParse(v))
      redis.call('hdel', H, id)
    end
    redis.call('zrem', Z, id)
    dropped = true
  end
  for _, m in ipairs(redis.call('zrangebyscore', D, '-inf', now)) do
    redis.call('lrem', Q, 0, m)
    redis.call('zrem', D, m)
    dropped = true
  end
  return dropped
end

-- Wakes, by id, the waiters at the head of the queue that fit now, in order: it stops
-- at the first that does not (no later one may pass it). Deletes what is left of an
-- unused semaphore (no permit held, nobody waiting).
local function semWake(H, Z, Q, D, channel, how)
  local limit = tonumber(redis.call('hget', H, 'limit') or '0')
  local used = tonumber(redis.call('hget', H, 'used') or '0')
  local queue = redis.call('lrange', Q, 0, -1)
  if #queue == 0 then
    redis.call('del', Q, D)
    if used <= 0 then redis.call('del', H, Z) end
    return
  end
  for _, m in ipairs(queue) do
    used = used + semWant(m)
    if used > limit then return end
    wakeOwner(channel, string.sub(m, string.find(m, '|', 1, true) + 1), how)
  end
end
