-- Shared prelude (put in front of every script that calls mint): the next fencing
-- token of a lock name, stored in its counter `fence`, which lives `retention` ms
-- after this use and is then gone (no key outlives a name's use for good).
-- The token is the larger of the counter + 1 and the server's clock in microseconds
-- (TIME, never a client's clock). While the counter lives, tokens grow by it. Once it
-- has expired (or a restart lost it, or a stale snapshot or a lagging replica brought
-- back an older value), the clock is above every token minted before, given that:
--   - a name mints at most one token per microsecond on average (a script call alone
--     costs several), so no token ran ahead of the clock it was minted at, and
--   - the server's clock does not go back by more than `retention` (the counter
--     expired because that clock passed the last use plus `retention`).
-- Tokens stay JavaScript safe integers (< 2^53) until the clock reaches 2^53 us,
-- in June 2255; doubles (Lua's numbers) hold them exactly too.
local function mint(fence, retention)
  local t = redis.call('time')
  local clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local token = tonumber(redis.call('get', fence) or '0') + 1
  if token < clock then token = clock end
  -- '%.0f': a Lua number passed to redis.call might be written as 1.7e+15.
  redis.call('set', fence, string.format('%.0f', token), 'px', retention)
  return token
end

