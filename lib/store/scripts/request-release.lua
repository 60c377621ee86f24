-- Ask every holder of the lock to let go (requestRelease); nothing is changed.
-- KEYS[1] lock hash; ARGV[1] holder channel prefix, ARGV[2] the hold's id in clients.
-- Returns the owners asked.
return tellHolders(KEYS[1], ARGV[1], 'revoke', ARGV[2])
