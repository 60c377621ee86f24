-- Read-write lock: batched watchdog renewal of read holds (a write hold is renewed by
-- renew.lua on W). KEYS per hold: R, E, W (see _rwqueue.lua); ARGV per hold: owner,
-- lease ms. Readers whose own lease ran out (this one's client counts it lost by then)
-- are dropped, not renewed: while live readers renew, a dead one leaves R within one
-- renewal period even if nobody waits. Returns per hold: 1 renewed, 2 a writer holds
-- the lock (taken), 0 gone (deleted).
local now = clock()
local out = {}
for i = 1, #KEYS / 3 do
  local R, E, W = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local q = {R = R, E = E}
  local owner, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local dead = redis.call('zrangebyscore', E, '-inf', now)
  for _, gone in ipairs(dead) do
    redis.call('hdel', R, gone)
    redis.call('zrem', E, gone)
  end
  local ends = tonumber(redis.call('zscore', E, owner) or '0')
  if ends > now and redis.call('hexists', R, owner) == 1 then
    if now + lease > ends then redis.call('zadd', E, now + lease, owner) end
    rwExpire(q, now)
    out[i] = 1
  else
    if #dead > 0 then rwExpire(q, now) end
    out[i] = redis.call('exists', W) == 1 and 2 or 0
  end
end
return out
