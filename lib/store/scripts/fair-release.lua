-- Fair lock: drop one level of ARGV[1]'s hold; at zero delete the lock and give it to
-- the head of the queue (_passOn.lua), or wake that head only (the message names it),
-- not every waiter.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] waiter deadlines, KEYS[4] fencing counter,
-- KEYS[5] tickets.
-- ARGV[1] owner, ARGV[2] wake-up channel, ARGV[3] 'publish' or 'spublish',
-- ARGV[4] levels the client holds before this release (1 for the last), ARGV[5] '1' to
-- grant the head, '0' to wake it, ARGV[6] key retention ms (the counter's TTL).
-- Returns {0} not held, {1, count} still held, {2, waiters} released, {2, waiters,
-- grant} released and granted to the head (grant: its message, see _passOn.lua).
local lock, queue, deadlines, fence, tickets, owner = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1]
local held = tonumber(redis.call('hget', lock, owner) or '0')
if held == 0 then return {0} end
-- Already applied, its reply lost with the connection (see release.lua).
if held < tonumber(ARGV[4]) then return {1, held} end
local count = redis.call('hincrby', lock, owner, -1)
if count > 0 then return {1, count} end
redis.call('del', lock)
-- Nobody queued: nobody to pass it on to, and the tickets can hold only this owner's
-- mark (a grant it claimed by its message).
if redis.call('exists', queue) == 0 then
  redis.call('del', tickets)
  return {2, 0}
end
redis.call('hdel', tickets, owner)

local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, dead in ipairs(redis.call('zrangebyscore', deadlines, '-inf', now)) do
  redis.call('lrem', queue, 0, dead)
  redis.call('zrem', deadlines, dead)
  redis.call('hdel', tickets, dead)
end

local head = redis.call('lindex', queue, 0)
local grant
if head then
  grant = passOn(lock, fence, queue, deadlines, tickets, head, now, ARGV[2], ARGV[3], tonumber(ARGV[6]), ARGV[5])
else
  redis.call('del', queue, deadlines, tickets)
end
return {2, redis.call('llen', queue), grant}
