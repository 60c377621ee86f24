-- Quorum mode: raise a master's fencing counter to at least ARGV[1], so the next
-- token minted there exceeds every token already handed out (see quorum.ts).
-- KEYS[1] fencing counter. Returns the counter after the call.
local current = tonumber(redis.call('get', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if current < floor then
  redis.call('set', KEYS[1], floor)
  return floor
end
return current
