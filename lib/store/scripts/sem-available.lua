-- Semaphore: permits held now, counting only permits whose lease has not run out
-- (read-only: nothing is pruned; see _semPrune.lua for the keys). KEYS[1] H, KEYS[2] Z.
-- Returns {limit in Redis or -1, permits held}.
local H, Z = KEYS[1], KEYS[2]
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local used = 0
for _, id in ipairs(redis.call('zrangebyscore', Z, '(' .. string.format('%.0f', now), '+inf')) do
  local v = redis.call('hget', H, id)
  if v then used = used + tonumber(string.match(v, '^(%d+),')) end
end
return {tonumber(redis.call('hget', H, 'limit') or '-1'), used}
