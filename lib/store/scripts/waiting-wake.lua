-- The plain lock: a client whose last release left the lock free for a waiting
-- client whose turn had not come yet (so nobody was woken), and which does not take it
-- again itself, wakes that client now instead of letting it sleep until its turn.
-- KEYS[1] lock hash, KEYS[2] waiting clients, KEYS[3] their deadlines.
-- ARGV[1] the lock's channel (see wakeClient), ARGV[2] 'publish' or 'spublish'.
-- Returns the receivers.
if redis.call('exists', KEYS[1]) == 1 then return 0 end
local head = headOf(KEYS[2], KEYS[3], ENTRY_LEASE)
if not head then return 0 end
return wakeClient(ARGV[1], head, ARGV[2])
