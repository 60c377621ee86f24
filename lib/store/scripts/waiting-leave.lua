-- The plain lock: a client none of whose waiters waits any longer leaves the waiting
-- list (see _waiting.lua); if it headed the list, the new head's tenure starts and it
-- is woken when the lock is free, or told when its turn comes while it is held.
-- KEYS[1] lock hash, KEYS[2] waiting clients, KEYS[3] their deadlines.
-- ARGV[1] client id, ARGV[2] the lock's channel (see wakeClient), ARGV[3] 'publish' or 'spublish'.
local waiting, alive, me = KEYS[2], KEYS[3], ARGV[1]
local first = redis.call('zrange', waiting, 0, 0)[1]
if redis.call('zrem', waiting, me) == 0 then return 0 end
redis.call('zrem', alive, me)
if first == me then
  local head, since, now = headOf(waiting, alive, ENTRY_LEASE)
  if head then
    markHead(alive, ENTRY_LEASE, now)
    if redis.call('exists', KEYS[1]) == 0 then
      wakeClient(ARGV[2], head, ARGV[3])
    else
      tellHead(ARGV[2], head, turnLeft(waiting, alive, since, now), ARGV[3])
    end
  end
end
return 1
