-- Semaphore: give back id's permits and grant them on to the waiters that fit now
-- (semGrant). KEYS sem, expiry, queue, deadlines, tickets. ARGV[1] id, ARGV[2] levels the
-- client holds before this call (more than 1: a give-back of a duplicate grant), ARGV[3]
-- wake-up channel, ARGV[4] 'publish' or 'spublish'.
-- Returns {0} not held, {1, levels} one level dropped (or already applied), {2, waiters,
-- grant...} released (waiters: left in the queue; grant: each grant's message).
local q = {sem = KEYS[1], expiry = KEYS[2], queue = KEYS[3], deadlines = KEYS[4], tickets = KEYS[5], channel = ARGV[3], how = ARGV[4]}
local id = ARGV[1]
local now = clock()
semPrune(q, now)
local v = redis.call('hget', q.sem, id)
if not v then return {0} end
local p, l = semParse(v)
-- Fewer levels than the client counts: this call already ran (a resend whose first
-- reply was lost), as in release.lua.
if l < tonumber(ARGV[2]) then return {1, l} end
if l > 1 then
  redis.call('hset', q.sem, id, p .. ',' .. (l - 1))
  return {1, l - 1}
end
semDrop(q, id)
local grants = semGrant(q, now)
return {2, redis.call('llen', q.queue), unpack(grants)}
