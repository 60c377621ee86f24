-- Semaphore: a waiter that gives up (timeout, abort, close) leaves the queue at once;
-- the waiters behind it that fit now are woken, and an unused semaphore is deleted.
-- KEYS[1] H, KEYS[2] Z, KEYS[3] Q, KEYS[4] D.
-- ARGV[1] queue member "<permits>|<id>", ARGV[2] wake-up channel, ARGV[3] 'publish' or 'spublish'.
local H, Z, Q, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
redis.call('lrem', Q, 0, ARGV[1])
redis.call('zrem', D, ARGV[1])
semPrune(H, Z, Q, D, semNow())
semWake(H, Z, Q, D, ARGV[2], ARGV[3])
return 1
