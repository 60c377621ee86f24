-- Take the lock for ARGV[1] when the key is free, or reenter when ARGV[1] already
-- holds it. KEYS[1] lock hash (owner -> count), KEYS[2] fencing counter.
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] levels the client knows the owner holds
-- (0 for a new hold).
-- Returns {1, token, reentered} when held, {0, pttl, counter} when someone else
-- holds it (the counter lets quorum mode raise lagging masters' counters).
local key, fence, owner, lease = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])
local held = tonumber(redis.call('hget', key, owner) or '0')
if held > tonumber(ARGV[3]) then
  -- More levels than the client knows of: this very call ran already and its reply
  -- was lost with the connection (ioredis resends unfulfilled commands after a
  -- reconnect). Counting it twice would keep the lock held after the last unlock.
  return {1, tonumber(redis.call('get', fence) or '0'), 1}
end
if held > 0 then
  redis.call('hincrby', key, owner, 1)
  -- A reentry may extend the lease but never shortens what the outer hold was given.
  if redis.call('pttl', key) < lease then redis.call('pexpire', key, lease) end
  -- Only the holder's first acquisition minted a token since it took the key, so the
  -- counter still holds that token: a reentry returns the same one.
  return {1, tonumber(redis.call('get', fence) or '0'), 1}
end
if redis.call('exists', key) == 0 then
  redis.call('hset', key, owner, 1)
  redis.call('pexpire', key, lease)
  -- The counter is never reset, so tokens only grow, whoever held the lock before.
  return {1, redis.call('incr', fence), 0}
end
return {0, redis.call('pttl', key), tonumber(redis.call('get', fence) or '0')}
