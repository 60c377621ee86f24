-- Semaphore: batched watchdog renewal of permits of one slot.
-- KEYS[4i-3..4i] H, Z, Q, D of item i (see _semPrune.lua); ARGV[2i-1] permit id, ARGV[2i] lease ms.
-- Returns per item: 1 renewed, 0 gone (expired and dropped, or deleted). A permit is
-- never "taken": its id is its own.
local out = {}
local now = semNow()
for i = 1, #KEYS / 4 do
  local H, Z, Q, D = KEYS[4 * i - 3], KEYS[4 * i - 2], KEYS[4 * i - 1], KEYS[4 * i]
  local id, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local expiry = tonumber(redis.call('zscore', Z, id))
  if expiry and expiry > now and redis.call('hexists', H, id) == 1 then
    if expiry < now + lease then redis.call('zadd', Z, now + lease, id) end
    semKeep(H, Z, lease)
    out[i] = 1
  else
    -- Expired (the holder stalled past its lease): dropped as any script would, so its
    -- permits come back. Waiters need no message: the head retries when the first
    -- permit's lease ends, the others at least every third of a heartbeat.
    semPrune(H, Z, Q, D, now)
    out[i] = 0
  end
end
return out
