-- Semaphore: take `want` permits for id, in arrival order, or take up the grant a release
-- made this wait; refused, a waiting caller joins the queue (or heartbeats its place).
-- See _semaphore.lua.
-- KEYS[1] sem, KEYS[2] expiry, KEYS[3] queue, KEYS[4] deadlines, KEYS[5] tickets.
-- ARGV[1] id, ARGV[2] permits wanted, ARGV[3] the client's limit, ARGV[4] lease ms,
-- ARGV[5] waiter heartbeat lease ms, ARGV[6] the wait's id ('' for one attempt: never
-- joins), ARGV[7] wake-up channel, ARGV[8] 'publish' or 'spublish'.
-- Returns {1} granted, {1, pttl} when this takes up a grant (the lease left of it),
-- {0, pttl, isHead, stamp} refused (pttl: until the first permit held expires, -2 none;
-- isHead: heads the queue, always 0 for one attempt; stamp: see semStamp), {-1, limit}
-- when Redis keeps another limit for the name.
local q = {sem = KEYS[1], expiry = KEYS[2], queue = KEYS[3], deadlines = KEYS[4], tickets = KEYS[5], channel = ARGV[7], how = ARGV[8]}
local id, want, limit, lease, heartbeat, wait = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]

local s, v = semRead(q, id)
-- Kept while anything is held or queued: later callers are checked against it.
if s.limit and s.limit ~= limit then return {-1, s.limit} end
s.limit = limit

local now = clock()
local dropped = semPrune(q, s, now)
if dropped then v = redis.call('hget', q.sem, id) end

if v then
  -- A release granted this wait the permits and its message has not been read: the grant.
  if takeUp(q, id, wait) then
    semWrite(q, s)
    return {1, math.max(0, tonumber(redis.call('zscore', q.expiry, id)) - now)}
  end
  -- The id already holds (a resend after a reconnect): one more level, given back by
  -- sem-release.lua's level rule, never more permits.
  local p, l = semParse(v)
  s.set[id] = p .. ',' .. (l + 1)
  s.dirty = true
  if (tonumber(redis.call('zscore', q.expiry, id)) or 0) < now + lease then redis.call('zadd', q.expiry, now + lease, id) end
  semKeep(s, now, lease, false)
  semWrite(q, s)
  return {1}
end

-- Arrival order: every waiter queued ahead of this call counts as if it held its
-- permits already, so a stream of small requests cannot pass a big one. With no room
-- even before them, the queue is not read; otherwise the sum stops once it is positive
-- and leaves no room: more waiters ahead change neither answer (it does not fit, it is
-- not the head), and a long queue costs a refused caller a look at its first waiters only.
local ahead = 0
if s.used + want <= limit then
  for _, other in ipairs(redis.call('lrange', q.queue, 0, -1)) do
    if other == id then break end
    ahead = ahead + (semWant(redis.call('hget', q.tickets, other)) or 0)
    if ahead > 0 and s.used + ahead + want > limit then break end
  end
  if s.used + ahead + want <= limit then
    semHold(q, s, id, want, lease, now)
    if redis.call('zscore', q.deadlines, id) then
      redis.call('hdel', q.tickets, id)
      dequeue(q, id)
    end
    -- Waiters behind fit or not as before (its permits moved from queued to held), unless
    -- expired permits or dead waiters were dropped just now.
    if dropped then semGrant(q, s, now) else semWrite(q, s) end
    return {1}
  end
end

local head = 0
if wait ~= '' then
  local first = enqueue(q, id, redis.call('lindex', q.queue, 0), wait .. ' ' .. lease .. ' ' .. now .. ' ' .. want, heartbeat, now)
  head = first == id and 1 or 0
  semKeep(s, now, heartbeat * 2, false)
end
if dropped then
  semGrant(q, s, now)
  s.first = tonumber(redis.call('zrange', q.expiry, 0, 0, 'withscores')[2])
else
  semWrite(q, s)
end
return {0, s.first and math.max(0, s.first - now) or -2, head, s.stamp}
