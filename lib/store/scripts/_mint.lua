-- Shared prelude (put in front of every script that calls mint or mintCounted): the
-- next fencing token of a lock name, stored in its counter `fence`, which lives
-- `retention` ms after this use and is then gone (no key outlives a name's use for good).
-- Tokens stay JavaScript safe integers (< 2^53) until the clock reaches 2^53 us,
-- in June 2255; doubles (Lua's numbers) hold them exactly too.
-- RETENTION is the default key retention (the client's DEFAULT_RETENTION, which it
-- reads from this source): a script whose retention argument is absent uses it.
local RETENTION = 86400000

-- The server's clock (TIME, never a client's clock), read once per call: every date a
-- call writes (a queue's deadlines, a token minted from the clock) is the same instant.
local serverTime
local function timeNow()
  serverTime = serverTime or redis.call('time')
  return serverTime
end

-- The server's clock in microseconds. The digits put side by side, not seconds *
-- 1000000: that product wraps in Lua VMs with 32-bit integers (fengari, which
-- ioredis-mock runs), and a float factor would make it a float where integers are
-- 64-bit (Lua 5.4: Dragonfly).
local function clockMicros()
  local t = timeNow()
  return tonumber(t[1] .. string.format('%06d', tonumber(t[2])))
end

-- '%.0f': a Lua number passed to redis.call might be written as 1.7e+15. 'PX' in
-- capitals: ioredis-mock ignores SET's options written in lower case.
local function setCounter(fence, token, retention)
  redis.call('set', fence, string.format('%.0f', token), 'PX', retention)
end

-- One master, Sentinel, a Cluster: the token is the greater of the counter + 1 and the
-- server's clock in microseconds. The counter alone keeps tokens increasing on one
-- dataset; the clock keeps them increasing when the dataset went back: an absent
-- counter (expired, or an empty restart), or one a failover set back (the promoted
-- replica lacked the last increments, or a forced failover's old master went on
-- minting). Then the new tokens are past every token minted before, given that:
--   - a name mints at most one token per microsecond on average (a script call alone
--     costs several), so no token ran ahead of the clock that minted it, and
--   - no server's clock is behind the clock of an earlier mint of the name: a clock
--     does not go back (by more than `retention`, for an expired counter), and a
--     promoted replica's clock trails its old master's by less than the failover took.
local function mint(fence, retention)
  local token = math.max(tonumber(redis.call('get', fence) or '0') + 1, clockMicros())
  setCounter(fence, token, retention)
  return token
end

-- Quorum mode: tokens grow by one (INCR), so the masters' counters stay equal once
-- raised to a common floor and no floor round trip follows (a clock per master would
-- set them apart at every mint); a majority, not one dataset, keeps them increasing.
-- An absent counter starts again from the server's clock, as in mint.
local function mintCounted(fence, retention)
  local token = redis.call('incr', fence)
  if token == 1 then
    token = clockMicros()
    setCounter(fence, token, retention)
  else
    redis.call('pexpire', fence, retention)
  end
  return token
end
