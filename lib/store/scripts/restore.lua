-- Quorum mode: put a hold back on a master that lost it (restarted empty), after a
-- majority of masters renewed it. Only where the key is absent: never over another
-- owner's hold, and never a level onto a hold that is there.
-- KEYS[i] lock hash; ARGV[3i-2] owner, ARGV[3i-1] levels, ARGV[3i] lease ms.
-- Returns per key: 1 put back, 0 left alone (the key exists).
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('exists', key) == 0 then
    redis.call('hset', key, ARGV[3 * i - 2], ARGV[3 * i - 1])
    redis.call('pexpire', key, tonumber(ARGV[3 * i]))
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
