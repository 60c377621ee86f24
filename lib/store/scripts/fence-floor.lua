-- Quorum mode: raise a master's fencing counter to at least ARGV[1], so the next
-- token minted there exceeds every token already handed out (see quorum.ts). A use of
-- the name like a mint: the counter lives ARGV[2] ms (the key retention) from now.
-- KEYS[1] fencing counter. Returns the counter after the call.
local current = tonumber(redis.call('get', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if current < floor then
  redis.call('set', KEYS[1], string.format('%.0f', floor), 'PX', tonumber(ARGV[2]))
  return floor
end
redis.call('pexpire', KEYS[1], tonumber(ARGV[2]))
return current
