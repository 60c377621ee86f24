-- Semaphore: a waiter that gives up leaves the queue at once, and gives back a grant its
-- wait never took up; the waiters that fit then are granted (semGrant). KEYS sem, expiry,
-- queue, deadlines, tickets. ARGV id, wait id, wake-up channel, 'publish' or 'spublish'.
local q = {sem = KEYS[1], expiry = KEYS[2], queue = KEYS[3], deadlines = KEYS[4], tickets = KEYS[5], channel = ARGV[3], how = ARGV[4]}
local id = ARGV[1]
local s, v = semRead(q, id)
local now = clock()
leave(q, id, ARGV[2], function() semDrop(q, s, id, v) end)
semPrune(q, s, now)
semGrant(q, s, now)
return 1
