-- Read-write lock: a waiter that gives up (timeout, abort, close) leaves the queue at
-- once, and gives back a grant its wait never took up; those that may get in then are
-- granted (rwGrant: a writer's place held readers back, any head held writers back).
-- KEYS as rw-release.lua's. ARGV[1] owner, ARGV[2] 'r' or 'w', ARGV[3] the wait's id,
-- ARGV[4] read channel, ARGV[5] write channel, ARGV[6] 'publish' or 'spublish',
-- ARGV[7] key retention ms.
local q = {W = KEYS[1], R = KEYS[2], E = KEYS[3], fence = KEYS[4], queue = KEYS[5], deadlines = KEYS[6], tickets = KEYS[7],
  rch = ARGV[4], wch = ARGV[5], how = ARGV[6], retention = tonumber(ARGV[7])}
local owner, mode = ARGV[1], ARGV[2]
local now = clock()
local hash = mode == 'r' and q.R or q.W
leave(q, owner, ARGV[3], function()
  -- The grant's level (another wait of this owner may hold more).
  if redis.call('hexists', hash, owner) == 1 and redis.call('hincrby', hash, owner, -1) <= 0 then rwDrop(q, mode, owner, now) end
end)
rwPrune(q, now)
rwGrant(q, now)
return 1
