-- The lock and the fair lock: drop one level of ARGV[1]'s hold; at zero delete the lock
-- and grant it to the queue's head (or wake that head only), unless the head's barging
-- window still runs (see _queue.lua).
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] fencing counter,
-- KEYS[5] tickets.
-- ARGV[1] owner, ARGV[2] wake-up channel, ARGV[3] 'publish' or 'spublish',
-- ARGV[4] levels the client holds before this release (1 for the last), ARGV[5] '1' to
-- grant the head, '0' to wake it, ARGV[6] key retention ms, ARGV[7] barging window ms.
-- Returns {0} not held, {1, count} still held, {2, waiters} released, {2, waiters,
-- grant} released and granted to the head (grant: its message).
local q = {lock = KEYS[1], queue = KEYS[2], deadlines = KEYS[3], fence = KEYS[4], tickets = KEYS[5],
  channel = ARGV[2], how = ARGV[3], retention = tonumber(ARGV[6]), window = tonumber(ARGV[7])}
local owner = ARGV[1]
local held = tonumber(redis.call('hget', q.lock, owner) or '0')
if held == 0 then return {0} end
-- Fewer levels than the client holds: this release ran already and its reply was lost
-- with the connection (the client resent it). A second decrement could free the lock
-- under an owner that still holds a level.
if held < tonumber(ARGV[4]) then return {1, held} end
local count = redis.call('hincrby', q.lock, owner, -1)
if count > 0 then return {1, count} end
redis.call('del', q.lock)
-- Nobody queued: the tickets can hold only this owner's mark (a grant it took up).
if redis.call('exists', q.queue) == 0 then
  redis.call('del', q.tickets)
  return {2, 0}
end
redis.call('hdel', q.tickets, owner)
local now = clock()
prune(q, now)
local head = redis.call('lindex', q.queue, 0)
if not head then
  redis.call('del', q.queue, q.deadlines, q.tickets)
  return {2, 0}
end
if bargeOpen(q, now, owner, head) then
  -- The lock stays free for whoever asks first; the head hears of it once per tenure.
  if redis.call('hsetnx', q.tickets, '#woken', 1) == 1 then wakeOwner(q.channel, head, q.how) end
  return {2, redis.call('llen', q.queue)}
end
local grant = grantHead(q, head, now, ARGV[5] == '1')
return {2, redis.call('llen', q.queue), grant}
