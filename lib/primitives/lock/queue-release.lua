-- The lock and the fair lock: drop one level of ARGV[1]'s hold; at zero delete the lock
-- and grant it to the queue's head (or wake that head only; see _queue.lua).
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] fencing counter,
-- KEYS[5] tickets.
-- ARGV[1] owner, then what the caller leaves off at its default: ARGV[2] levels the
-- client holds before this release (absent: 1, the last), ARGV[3] key retention ms
-- (absent: RETENTION), ARGV[4] 'spublish' to publish sharded (absent or 'publish'),
-- ARGV[5] '0' to wake the head rather than grant it (syncReplicas; absent: '1'). The
-- wake-up channel is KEYS[1]..':next'.
-- Returns {0} not held, {1, count} still held, {2} released, {2, grant} released and
-- granted to the head (grant: its message).
local owner = ARGV[1]
local held = tonumber(redis.call('hget', KEYS[1], owner) or '0')
if held == 0 then return {0} end
-- Fewer levels than the client holds: this release ran already and its reply was lost
-- with the connection (the client resent it). A second decrement could free the lock
-- under an owner that still holds a level.
if held < (tonumber(ARGV[2]) or 1) then return {1, held} end
if held > 1 then return {1, redis.call('hincrby', KEYS[1], owner, -1)} end
-- The last level: the key goes (it holds no other owner).
redis.call('del', KEYS[1])
-- Nobody queued (the uncontended release stops here, before the queue's functions are
-- made: see scripts/embed-lua.mjs): the tickets can hold only this owner's mark (a
-- grant it took up).
local queued = redis.call('exists', KEYS[2], KEYS[5])
if queued == 0 then return {2} end
-- @preludes: the queue's (_queue.lua), to grant the head.

local q = {lock = KEYS[1], queue = KEYS[2], deadlines = KEYS[3], fence = KEYS[4], tickets = KEYS[5],
  channel = KEYS[1] .. ':next', how = ARGV[4] or 'publish', retention = tonumber(ARGV[3]) or RETENTION}
if queued == 1 and redis.call('exists', q.queue) == 0 then
  redis.call('del', q.tickets)
  return {2}
end
redis.call('hdel', q.tickets, owner)
local now = clock()
prune(q, now)
local head = redis.call('lindex', q.queue, 0)
if not head then
  redis.call('del', q.queue, q.deadlines, q.tickets)
  return {2}
end
return {2, grantHead(q, head, now, ARGV[5] ~= '0')}
