-- Shared prelude of the read-write lock's scripts (put in front of every script that
-- calls rwnow). The keys of one name, all under its hash tag (one Cluster slot):
--   W  the write hold: hash owner -> levels, PEXPIRE its lease (a plain lock's layout)
--   R  the read holds: hash owner -> levels
--   E  each read hold's own expiry: sorted set owner -> ms by the server's clock
--   Q  the waiters, oldest first: list of 'r:' or 'w:' .. owner
--   D  each waiter's heartbeat deadline: sorted set entry -> ms
-- One entry per reader (not a key per reentry, as Redisson keeps): R and E expire with
-- the longest read lease left, and whichever script runs next drops a reader whose own
-- lease ran out (its process died) and a waiter whose heartbeat stopped.

-- The server's clock in ms, never a client's (the digits side by side: see _mint.lua).
local function rwnow()
  local t = redis.call('time')
  return tonumber(t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000)))
end

-- R and E live as long as the longest read lease left, and go with the last reader.
local function rwexpire(R, E, now)
  local top = redis.call('zrange', E, -1, -1, 'withscores')
  local ttl = top[2] and tonumber(top[2]) - now or 0
  if ttl <= 0 or redis.call('hlen', R) == 0 then
    redis.call('del', R, E)
  else
    redis.call('pexpire', R, ttl)
    redis.call('pexpire', E, ttl)
  end
end

-- Drops dead readers and dead waiters. True when any went: a waiter may be free to go.
local function rwprune(R, E, Q, D, now)
  local dropped = false
  local dead = redis.call('zrangebyscore', E, '-inf', now)
  if #dead > 0 then
    for _, owner in ipairs(dead) do
      redis.call('hdel', R, owner)
      redis.call('zrem', E, owner)
    end
    rwexpire(R, E, now)
    dropped = true
  end
  local gone = redis.call('zrangebyscore', D, '-inf', now)
  if #gone > 0 then
    for _, entry in ipairs(gone) do
      redis.call('lrem', Q, 0, entry)
      redis.call('zrem', D, entry)
    end
    if redis.call('llen', Q) == 0 then redis.call('del', Q, D) end
    dropped = true
  end
  return dropped
end
