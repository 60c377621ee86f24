-- A multi-lock's names released in one call, each that this owner holds at one level
-- with nobody queued and no ticket left (queue-release.lua's uncontended case, name by
-- name). A name with waiters (or more levels in Redis than the client counts) is left
-- as it is, for the client's queue release, which grants its head.
-- KEYS per name, 3 each: lock hash, queue, tickets. ARGV[1] owner.
-- Returns per name: 0 not held, 2 released, 3 left for the queue release.
local owner = ARGV[1]
local out = {}
for i = 1, #KEYS, 3 do
  local held = redis.call('hget', KEYS[i], owner)
  if not held then
    out[#out + 1] = 0
  elseif held == '1' and redis.call('exists', KEYS[i + 1], KEYS[i + 2]) == 0 then
    redis.call('del', KEYS[i])
    out[#out + 1] = 2
  else
    out[#out + 1] = 3
  end
end
return out
