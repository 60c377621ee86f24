-- Semaphore: give back id's permits and grant them on to the waiters that fit now
-- (semGrant). KEYS sem, expiry, queue, deadlines, tickets. ARGV[1] id, ARGV[2] levels the
-- client holds before this call (more than 1: a give-back of a duplicate grant), ARGV[3]
-- wake-up channel, ARGV[4] 'publish' or 'spublish'.
-- Returns {0} not held, {1, levels} one level dropped (or already applied), {2, grant...}
-- released (grant: each grant's message).
local q = {sem = KEYS[1], expiry = KEYS[2], queue = KEYS[3], deadlines = KEYS[4], tickets = KEYS[5], channel = ARGV[3], how = ARGV[4]}
local id = ARGV[1]
local s, v = semRead(q, id)
local now = clock()
local dropped = semPrune(q, s, now)
if dropped then v = redis.call('hget', q.sem, id) end
local reply = {0}
if v then
  local p, l = semParse(v)
  if l == 1 and tonumber(ARGV[2]) <= 1 then
    semDrop(q, s, id, v)
    return {2, unpack(semGrant(q, s, now))}
  end
  -- Fewer levels than the client counts: this call already ran (a resend whose first
  -- reply was lost), as in release.lua.
  if l < tonumber(ARGV[2]) then
    reply = {1, l}
  else
    s.set[id] = p .. ',' .. (l - 1)
    s.dirty = true
    reply = {1, l - 1}
  end
end
-- Expired permits or dead waiters dropped just now: the waiters that fit are granted.
if dropped then semGrant(q, s, now) else semWrite(q, s) end
return reply
