-- Delete the lock whoever holds it, tell its holders (their holds are lost at once, not
-- at their next renewal) and wake the waiters. The fencing counter stays.
-- KEYS[1] lock hash, KEYS[2] its queue (_queue.lua; absent in quorum mode, which has
-- none); ARGV[1] channel, ARGV[2] 'publish' or 'spublish', ARGV[3] holder channel
-- prefix, ARGV[4] the hold's id in clients, ARGV[5] the queue's wake-up channel (with KEYS[2]).
-- Returns 1 when a lock was deleted, 0 when there was none.
tellHolders(KEYS[1], ARGV[3], 'deleted', ARGV[4])
if redis.call('del', KEYS[1]) == 1 then
  -- Waiters in their client (quorum mode) hear 'released'; waiters in the queue sleep on
  -- its wake-up channel: '*' wakes them, and they ask again in queue order (the first
  -- to ask grants the free lock to the head).
  notify(ARGV[1], 'released', ARGV[2])
  if KEYS[2] and redis.call('exists', KEYS[2]) == 1 then notify(ARGV[5], '*', ARGV[2]) end
  return 1
end
return 0
