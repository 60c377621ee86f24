-- Delete the lock whoever holds it and wake the waiters. The fencing counter stays.
-- KEYS[1] lock hash; ARGV[1] channel, ARGV[2] 'publish' or 'spublish'.
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('del', KEYS[1]) == 1 then
  if ARGV[2] ~= 'spublish' or type(redis.pcall('spublish', ARGV[1], 'released')) == 'table' then
    redis.call('publish', ARGV[1], 'released')
  end
  return 1
end
return 0
