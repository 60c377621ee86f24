-- Batched watchdog renewal: one call renews many holds of one slot.
-- KEYS[i] lock hash; ARGV[2i-1] owner, ARGV[2i] lease ms.
-- Returns per key: 1 renewed, 2 held by another owner (taken), 0 gone (deleted).
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('hexists', key, ARGV[2 * i - 1]) == 1 then
    redis.call('pexpire', key, tonumber(ARGV[2 * i]))
    out[i] = 1
  elseif redis.call('exists', key) == 1 then
    out[i] = 2
  else
    out[i] = 0
  end
end
return out
