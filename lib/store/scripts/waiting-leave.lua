-- The plain lock: a client none of whose waiters waits any longer leaves the waiting
-- list (see _waiting.lua); if it headed the list, the new head's tenure starts and it
-- is woken when the lock is free, or told when its turn ends while it is held.
-- KEYS[1] lock hash, KEYS[2] waiting clients, KEYS[3] their deadlines.
-- ARGV[1] client id, ARGV[2] the lock's channel (see wakeClient), ARGV[3] 'publish' or 'spublish'.
local waiting, alive, me = KEYS[2], KEYS[3], ARGV[1]
local rank = redis.call('zrank', waiting, me)
if not rank then return 0 end
redis.call('zrem', waiting, me)
redis.call('zrem', alive, me)
if rank == 0 then
  local head, _, now = headOf(waiting, alive, ENTRY_LEASE)
  if head then
    startTurn(waiting, alive, ENTRY_LEASE, now)
    if redis.call('exists', KEYS[1]) == 0 then
      wakeClient(ARGV[2], head, ARGV[3])
    else
      tellHead(ARGV[2], head, turnLeft(alive, now), ARGV[3])
    end
  end
end
return 1
