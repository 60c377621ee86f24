-- Take the lock for ARGV[1] when the key is free and no other client's turn has come
-- (see _waiting.lua: while the head's turn runs anyone may, after it the head alone),
-- or reenter when ARGV[1] already holds it.
-- KEYS[1] lock hash (owner -> count), KEYS[2] fencing counter, and with a waiting list
-- (none in quorum mode) KEYS[3] waiting clients, KEYS[4] their deadlines.
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] the caller's client id on the waiting list,
-- ARGV[4] '1' to join the list when refused (the caller waits), absent or '' not to,
-- ARGV[5] key retention ms (the counter's TTL; absent: RETENTION), ARGV[6] 'spublish'
-- to publish sharded (absent or 'publish': PUBLISH). Callers leave trailing defaults
-- off: each argument costs both the client and the server, and a waiting lock() (the
-- common call) needs the first four only.
-- The lock's channel is KEYS[1]..':ch' (LockKeys.channel).
-- Returns {1, token} when held, {0, pttl, counter, turnIn} otherwise: pttl -2 when the
-- key is free but another client's turn has come; the counter lets quorum mode raise
-- lagging masters' counters; turnIn -1, or when the caller heads the list the ms until
-- the free lock is its alone.
local key, fence, owner, lease = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])
local waiting, alive, entry = KEYS[3], KEYS[4], ENTRY_LEASE
local me = waiting and ARGV[3] or ''
local retention, how = tonumber(ARGV[5]) or RETENTION, ARGV[6]
local now
-- One EXISTS of both keys: 0 (the common uncontended case) says the lock is free and
-- nobody waits, without reading the list; 2 that it is held; 1 asks the lock key.
-- Without a list, the lock key alone: 0 or 2.
local both = waiting and redis.call('exists', key, waiting) or redis.call('exists', key) * 2
if both == 0 or (both == 1 and redis.call('exists', key) == 0) then
  -- Free. With clients waiting, the head is asked for only once its turn is over.
  local withList = me ~= '' and both ~= 0
  local head
  if withList then
    now = clock()
    if turnLeft(alive, now) <= 0 then head = headOf(waiting, alive, entry, now) end
  end
  if not head or head == me then
    redis.call('hset', key, owner, 1)
    redis.call('pexpire', key, lease)
    if withList then served(waiting, alive, entry, me, key .. ':ch', how) end
    -- Above every token minted for the name, whoever held the lock before (see mint).
    return {1, mint(fence, retention)}
  end
  -- Free, and the head's turn has ended since the release, which woke nobody (the turn
  -- still ran then): wake it, or the free lock idles until it asks by itself.
  wakeClient(key .. ':ch', head, how)
elseif redis.call('hexists', key, owner) == 1 then
  redis.call('hincrby', key, owner, 1)
  -- A reentry may extend the lease but never shortens what the outer hold was given.
  if redis.call('pttl', key) < lease then redis.call('pexpire', key, lease) end
  -- Only the holder's first acquisition minted a token since it took the key, so the
  -- counter still holds that token: a reentry returns the same one. (The engine keeps
  -- the outer hold's token; after a hold longer than the retention the counter may be
  -- gone, and the next mint is above it all the same.)
  redis.call('pexpire', fence, retention)
  return {1, tonumber(redis.call('get', fence) or '0')}
end
local turnIn = -1
if me ~= '' and ARGV[4] == '1' then
  now = now or clock()
  local joined = redis.call('zadd', waiting, 'NX', now, me)
  redis.call('zadd', alive, now + entry, me)
  -- The list outlives its last live entry by at most one entry lease: no leak when
  -- every waiter dies.
  redis.call('pexpire', waiting, entry * 2)
  redis.call('pexpire', alive, entry * 2)
  local head = redis.call('zrange', waiting, 0, 0)[1]
  if joined == 1 then
    -- First on the list: its tenure starts; behind the head: the head's turn shrinks.
    if head == me then startTurn(waiting, alive, entry, now) else shrinkTurn(waiting, alive, now) end
  end
  if head == me then turnIn = math.max(0, math.ceil(turnLeft(alive, now))) end
end
return {0, redis.call('pttl', key), tonumber(redis.call('get', fence) or '0'), turnIn}
