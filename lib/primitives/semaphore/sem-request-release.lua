-- Semaphore: ask every holder of permits to let go (requestRelease); nothing is changed.
-- KEYS[1] sem, KEYS[2] expiry (see _semaphore.lua). ARGV[1] holder channel prefix,
-- ARGV[2] the holds' id in clients (the semaphore's key).
-- Returns the permit ids asked: those whose lease has not run out.
local live = {}
for _, id in ipairs(redis.call('zrangebyscore', KEYS[2], '(' .. string.format('%.0f', clock()), '+inf')) do
  if redis.call('hexists', KEYS[1], id) == 1 then live[#live + 1] = id end
end
return tellOwners(live, ARGV[1], 'revoke', ARGV[2])
