-- Semaphore: take `want` permits for id, in arrival order (see _semPrune.lua for the keys).
-- KEYS[1] H, KEYS[2] Z, KEYS[3] Q, KEYS[4] D.
-- ARGV[1] id, ARGV[2] permits wanted, ARGV[3] the client's limit, ARGV[4] lease ms,
-- ARGV[5] waiter heartbeat lease ms, ARGV[6] '1' to join (or stay in) the queue when
-- not granted, '0' for one attempt, ARGV[7] wake-up channel, ARGV[8] 'publish' or 'spublish'.
-- Returns {1} granted, {0, pttl, isHead} refused (pttl: until the first permit held
-- expires, -2 none), {-1, limit} when Redis keeps another limit for the name.
local H, Z, Q, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, want, limit, lease, hb = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])

local stored = tonumber(redis.call('hget', H, 'limit') or limit)
if stored ~= limit then return {-1, stored} end

local now = semNow()
local dropped = semPrune(H, Z, Q, D, now)

-- The id already holds (a resend after a reconnect, or a retry of the same wait while
-- an earlier attempt's grant is on its way): one more level, given back by
-- sem-release.lua's level rule, never more permits.
local v = redis.call('hget', H, id)
if v then
  local p, l = semParse(v)
  redis.call('hset', H, id, p .. ',' .. (l + 1))
  if (tonumber(redis.call('zscore', Z, id)) or 0) < now + lease then redis.call('zadd', Z, now + lease, id) end
  semKeep(H, Z, lease)
  return {1}
end

-- Arrival order: every waiter queued ahead of this call counts as if it held its
-- permits already, so a stream of small requests cannot pass a big one.
local me = want .. '|' .. id
local used = tonumber(redis.call('hget', H, 'used') or '0')
local ahead, queued = 0, false
for _, m in ipairs(redis.call('lrange', Q, 0, -1)) do
  if m == me then
    queued = true
    break
  end
  ahead = ahead + semWant(m)
end

if used + ahead + want <= limit then
  redis.call('hset', H, id, want .. ',1', 'limit', limit)
  redis.call('hincrby', H, 'used', want)
  redis.call('zadd', Z, now + lease, id)
  semKeep(H, Z, lease)
  if queued then
    redis.call('lrem', Q, 1, me)
    redis.call('zrem', D, me)
  end
  -- Waiters behind still fit or not as before (its permits moved from queued to held),
  -- unless expired permits or dead waiters were dropped just now.
  if dropped or queued then semWake(H, Z, Q, D, ARGV[7], ARGV[8]) end
  return {1}
end

if ARGV[6] == '1' then
  if not queued then redis.call('rpush', Q, me) end
  redis.call('zadd', D, now + hb, me)
  -- The queue outlives its last heartbeat by at most two heartbeat leases (no leak when
  -- every waiter dies); the limit stays as long, so later callers are checked against it.
  for _, k in ipairs({Q, D}) do
    if redis.call('pttl', k) < hb * 2 then redis.call('pexpire', k, hb * 2) end
  end
  redis.call('hset', H, 'limit', limit)
  if not redis.call('hget', H, 'used') then redis.call('hset', H, 'used', 0) end
  semKeep(H, Z, hb * 2)
end
if dropped then semWake(H, Z, Q, D, ARGV[7], ARGV[8]) end
local first = redis.call('zrange', Z, 0, 0, 'withscores')
local pttl = first[2] and math.max(0, tonumber(first[2]) - now) or -2
return {0, pttl, (ahead == 0) and 1 or 0}
