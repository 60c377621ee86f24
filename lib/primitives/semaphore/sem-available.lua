-- Semaphore: permits held now, counting only permits whose lease has not run out
-- (read-only: nothing is pruned; see _semaphore.lua). KEYS[1] sem, KEYS[2] expiry.
-- Returns {limit in Redis or -1, permits held}.
local used = 0
for _, id in ipairs(redis.call('zrangebyscore', KEYS[2], '(' .. string.format('%.0f', clock()), '+inf')) do
  local v = redis.call('hget', KEYS[1], id)
  if v then used = used + semParse(v) end
end
return {tonumber(redis.call('hget', KEYS[1], 'limit') or '-1'), used}
