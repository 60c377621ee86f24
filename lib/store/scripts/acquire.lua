-- Take the lock for ARGV[1] when the key is free, or reenter when ARGV[1] already
-- holds it. KEYS[1] lock hash (owner -> count), KEYS[2] fencing counter.
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] key retention ms (the counter's TTL).
-- Returns {1, token} when held, {0, pttl, counter} when someone else
-- holds it (the counter lets quorum mode raise lagging masters' counters).
local key, fence, owner, lease, retention = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('exists', key) == 0 then
  redis.call('hset', key, owner, 1)
  redis.call('pexpire', key, lease)
  -- Above every token minted for the name, whoever held the lock before (see mint).
  return {1, mint(fence, retention)}
end
if redis.call('hexists', key, owner) == 1 then
  redis.call('hincrby', key, owner, 1)
  -- A reentry may extend the lease but never shortens what the outer hold was given.
  if redis.call('pttl', key) < lease then redis.call('pexpire', key, lease) end
  -- Only the holder's first acquisition minted a token since it took the key, so the
  -- counter still holds that token: a reentry returns the same one. (The engine keeps
  -- the outer hold's token; after a hold longer than the retention the counter may be
  -- gone, and the next mint is above it all the same.)
  redis.call('pexpire', fence, retention)
  return {1, tonumber(redis.call('get', fence) or '0')}
end
return {0, redis.call('pttl', key), tonumber(redis.call('get', fence) or '0')}
