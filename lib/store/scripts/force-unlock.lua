-- Delete the lock whoever holds it and wake the waiters. The fencing counter stays.
-- KEYS[1] lock hash; ARGV[1] channel, ARGV[2] 'publish' or 'spublish'.
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('del', KEYS[1]) == 1 then
  notify(ARGV[1], 'released', ARGV[2])
  return 1
end
return 0
