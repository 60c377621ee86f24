-- Semaphore: what `semaphore.inspect()` shows (read-only: nothing is pruned). Only
-- permits whose lease has not run out count. KEYS[1] sem, KEYS[2] expiry, KEYS[3] queue.
-- Returns {limit in Redis or -1, waiters, id1, permits1, pttl1, ...}, the permits by
-- expiry, the soonest first.
local now = clock()
local out = {tonumber(redis.call('hget', KEYS[1], 'limit') or '-1'), redis.call('llen', KEYS[3])}
local live = redis.call('zrangebyscore', KEYS[2], '(' .. string.format('%.0f', now), '+inf', 'withscores')
for i = 1, #live, 2 do
  local v = redis.call('hget', KEYS[1], live[i])
  if v then
    out[#out + 1] = live[i]
    out[#out + 1] = semParse(v)
    out[#out + 1] = math.floor(tonumber(live[i + 1]) - now)
  end
end
return out
