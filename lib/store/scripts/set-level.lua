-- Set ARGV[1]'s level of hold to ARGV[2], if it still holds KEYS[1]. Idempotent: used
-- after an acquisition whose connection broke while it was out, which ioredis may have
-- run twice (it resends unanswered commands after reconnecting): the client knows
-- how many levels it holds, and a second run must not leave one more behind.
-- Returns 1 when set, 0 when the owner does not hold the lock.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
return 1
