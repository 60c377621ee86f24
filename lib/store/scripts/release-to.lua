-- As release.lua, handing the lock at zero straight to the next waiter of the same
-- client when no other client's turn has come (releaseLevel in _waiting_release.lua).
-- KEYS[1] lock hash, KEYS[2] waiting clients, KEYS[3] their deadlines, KEYS[4] the
-- fencing counter (the hand-off mints a token).
-- ARGV[1] owner, ARGV[2] the releasing client's id on the waiting list ('' for none),
-- ARGV[3] next owner, ARGV[4] its lease ms, ARGV[5] levels held before this release
-- (absent: 1), ARGV[6] 'spublish' to publish sharded (absent: PUBLISH), ARGV[7] key
-- retention ms (the counter's TTL; absent: RETENTION). The next owner first, so the
-- common hand-off sends four arguments (see acquire.lua).
return releaseLevel(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], tonumber(ARGV[5]) or 1, ARGV[6], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[7]) or RETENTION)
