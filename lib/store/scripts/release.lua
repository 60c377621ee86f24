-- Drop one level of ARGV[1]'s hold; at zero, delete the lock and wake the client whose
-- turn it is (releaseLevel in _waiting_release.lua; release-to.lua hands it off instead).
-- KEYS[1] lock hash, and with a waiting list (none in quorum mode) KEYS[2] waiting
-- clients, KEYS[3] their deadlines.
-- ARGV[1] owner, ARGV[2] the releasing client's id on the waiting list (absent or '':
-- no list, every waiter is woken by 'released'), ARGV[3] levels the client holds
-- before this release (absent: 1, the last), ARGV[4] 'spublish' to publish sharded
-- (absent or 'publish': PUBLISH). Callers leave trailing defaults off (see acquire.lua).
-- The lock's channel is KEYS[1]..':ch' (LockKeys.channel).
return releaseLevel(KEYS[1], KEYS[2], KEYS[3], nil, ARGV[1], ARGV[2] or '', tonumber(ARGV[3]) or 1, ARGV[4])
