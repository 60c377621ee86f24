-- Semaphore: batched watchdog renewal of permits of one slot.
-- KEYS[5i-4..5i] sem, expiry, queue, deadlines, tickets of item i (see _semaphore.lua);
-- ARGV[2i-1] permit id, ARGV[2i] lease ms.
-- Returns per item: 1 renewed, 0 gone (expired and dropped, or deleted). A permit is
-- never "taken": its id is its own.
local out = {}
local now = clock()
for i = 1, #KEYS / 5 do
  local q = {sem = KEYS[5 * i - 4], expiry = KEYS[5 * i - 3], queue = KEYS[5 * i - 2], deadlines = KEYS[5 * i - 1], tickets = KEYS[5 * i]}
  local id, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local s, v = semRead(q, id)
  local expiry = tonumber(redis.call('zscore', q.expiry, id))
  if expiry and expiry > now and v then
    if expiry < now + lease then redis.call('zadd', q.expiry, now + lease, id) end
    semKeep(s, now, lease, false)
    out[i] = 1
  else
    -- Expired (the holder stalled past its lease): dropped as any script would, so its
    -- permits come back. Waiters need no message: the head asks when the first permit's
    -- lease ends, the others at least every third of a heartbeat.
    semPrune(q, s, now)
    out[i] = 0
  end
  semWrite(q, s)
end
return out
