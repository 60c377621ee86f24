-- Shared prelude (put in front of every script that calls mint): the next fencing
-- token of a lock name, stored in its counter `fence`, which lives `retention` ms
-- after this use and is then gone (no key outlives a name's use for good).
-- While the counter lives, tokens grow by one (INCR: in quorum mode the masters'
-- counters stay equal once raised to a common floor, so no floor round trip follows).
-- When it is absent (expired, or a restart lost it), the counter starts again from the
-- server's clock in microseconds (TIME, never a client's clock), which is above every
-- token minted before, given that:
--   - a name mints at most one token per microsecond on average (a script call alone
--     costs several), so no token ran ahead of the clock of its counter's start, and
--   - the server's clock does not go back by more than `retention` (the counter
--     expired because that clock passed the last use plus `retention`).
-- Tokens stay JavaScript safe integers (< 2^53) until the clock reaches 2^53 us,
-- in June 2255; doubles (Lua's numbers) hold them exactly too.
-- RETENTION is the default key retention (the client's DEFAULT_RETENTION, which it
-- reads from this source): a script whose retention argument is absent uses it.
local RETENTION = 86400000

local function mint(fence, retention)
  local token = redis.call('incr', fence)
  if token == 1 then
    local t = redis.call('time')
    -- The digits put side by side, not seconds * 1000000: that product wraps in Lua VMs
    -- with 32-bit integers (fengari, which ioredis-mock runs), and a float factor would
    -- make it a float where integers are 64-bit (Lua 5.4: Dragonfly).
    token = tonumber(t[1] .. string.format('%06d', tonumber(t[2])))
    -- '%.0f': a Lua number passed to redis.call might be written as 1.7e+15. 'PX' in
    -- capitals: ioredis-mock ignores SET's options written in lower case.
    redis.call('set', fence, string.format('%.0f', token), 'PX', retention)
  else
    redis.call('pexpire', fence, retention)
  end
  return token
end
