-- Read-write lock: batched watchdog renewal of read holds (a write hold is renewed by
-- renew.lua on W). KEYS per hold: R, E, W (see rwnow's prelude); ARGV per hold: owner,
-- lease ms. A reader whose own lease already ran out is not renewed (its client counts
-- it lost by then) but dropped. Returns per hold: 1 renewed, 2 a writer holds the lock
-- (taken), 0 gone (deleted).
local now = rwnow()
local out = {}
for i = 1, #KEYS / 3 do
  local R, E, W = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local owner, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local ends = tonumber(redis.call('zscore', E, owner) or '0')
  if ends > now and redis.call('hexists', R, owner) == 1 then
    if now + lease > ends then redis.call('zadd', E, now + lease, owner) end
    rwexpire(R, E, now)
    out[i] = 1
  else
    if ends > 0 then
      redis.call('hdel', R, owner)
      redis.call('zrem', E, owner)
      rwexpire(R, E, now)
    end
    out[i] = redis.call('exists', W) == 1 and 2 or 0
  end
end
return out
