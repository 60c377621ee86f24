-- Semaphore: delete every permit held, whoever holds it (forceRelease), tell their
-- holders (their holds are lost at once, not at their next renewal) and wake every
-- waiter: each asks again, in arrival order (sem-acquire.lua). The limit stays while
-- someone waits; with nobody waiting the semaphore's keys go.
-- KEYS[1] sem, KEYS[2] expiry, KEYS[3] queue, KEYS[4] deadlines, KEYS[5] tickets.
-- ARGV[1] wake-up channel, ARGV[2] 'publish' or 'spublish', ARGV[3] holder channel
-- prefix, ARGV[4] the holds' id in clients (the semaphore's key).
-- Returns 1 when permits were deleted, 0 when none was held.
local q = {sem = KEYS[1], expiry = KEYS[2], queue = KEYS[3], deadlines = KEYS[4], tickets = KEYS[5], channel = ARGV[1], how = ARGV[2]}
local s = semRead(q)
semPrune(q, s, clock())
local told = tellHolders(q.sem, ARGV[3], 'deleted', ARGV[4])
for _, id in ipairs(told) do semDrop(q, s, id, nil) end
if redis.call('llen', q.queue) == 0 then
  redis.call('del', q.sem, q.expiry, q.tickets)
else
  s.used = 0
  s.dirty = true
  semWrite(q, s)
  notify(q.channel, '*', q.how)
end
return #told > 0 and 1 or 0
