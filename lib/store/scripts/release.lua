-- Quorum mode's release on one of the masters (one master or a Cluster use
-- queue-release.lua): drop one level of ARGV[1]'s hold; at zero delete the lock and
-- publish 'released' on its channel, which wakes every waiting client.
-- KEYS[1] lock hash. ARGV[1] owner, ARGV[2] levels the client holds before this release
-- (absent: 1, the last), ARGV[3] 'spublish' to publish sharded (absent or 'publish').
-- The lock's channel is KEYS[1]..':ch' (LockKeys.channel).
-- Returns {0} not held, {1, count} still held, {2} released.
local key, owner = KEYS[1], ARGV[1]
local held = tonumber(redis.call('hget', key, owner) or '0')
if held == 0 then return {0} end
-- Fewer levels than the client holds: this release ran already and its reply was lost
-- with the connection (ioredis resent it). A second decrement could free the lock
-- under an owner that still holds a level.
if held < (tonumber(ARGV[2]) or 1) then return {1, held} end
if held > 1 then return {1, redis.call('hincrby', key, owner, -1)} end
redis.call('del', key)
notify(key .. ':ch', 'released', ARGV[3])
return {2}
