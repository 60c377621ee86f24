-- Read-write lock: drop one level of an owner's read ('r') or write ('w') hold. At zero
-- the hold goes and the waiters at the head that may now get in are granted in the same
-- script (rwGrant: the writer, or the leading readers), one message each.
-- KEYS[1] W, KEYS[2] R, KEYS[3] E, KEYS[4] fencing counter, KEYS[5] queue,
-- KEYS[6] deadlines, KEYS[7] tickets (see _rwqueue.lua).
-- ARGV[1] owner, ARGV[2] 'r' or 'w', ARGV[3] levels the client holds before this
-- release (1 for the last), ARGV[4] read channel, ARGV[5] write channel,
-- ARGV[6] 'publish' or 'spublish', ARGV[7] key retention ms.
-- Returns {0} not held, {1, count} still held, {2, grant...} released (grant: each
-- grant's message).
local q = {W = KEYS[1], R = KEYS[2], E = KEYS[3], fence = KEYS[4], queue = KEYS[5], deadlines = KEYS[6], tickets = KEYS[7],
  rch = ARGV[4], wch = ARGV[5], how = ARGV[6], retention = tonumber(ARGV[7])}
local owner, mode = ARGV[1], ARGV[2]
local now = clock()
local dropped = rwPrune(q, now)
local hash = mode == 'r' and q.R or q.W
local held = tonumber(redis.call('hget', hash, owner) or '0')
local result
if held == 0 then
  result = {0}
elseif held < tonumber(ARGV[3]) then
  -- Already applied, its reply lost with the connection (see queue-release.lua).
  result = {1, held}
elseif held > 1 then
  result = {1, redis.call('hincrby', hash, owner, -1)}
else
  rwDrop(q, mode, owner, now)
  local grants = rwGrant(q, now)
  return {2, unpack(grants)}
end
if dropped then rwGrant(q, now) end
return result
