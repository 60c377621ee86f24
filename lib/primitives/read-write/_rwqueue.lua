-- Shared prelude of the read-write lock's scripts, whose waiters of both sides wait on
-- the queue of _queue.lua (of owner ids; tickets 'wait lease at side', side 'r' or 'w').
-- The other keys of a name, all under its hash tag (one Cluster slot):
--   W  the write hold: hash owner -> levels, PEXPIRE its lease (a plain lock's layout)
--   R  the read holds: hash owner -> levels
--   E  each read hold's own expiry: sorted set owner -> ms by the server's clock
-- One entry per reader (not a key per reentry, as Redisson keeps): R and E expire with
-- the longest read lease left, and whichever script runs next drops a reader whose own
-- lease ran out (its process died). A grant's mark is 'g wait token stamp': the stamp, a
-- number above every one before on the name ('#stamp' in tickets), dates the grant
-- against the wait's last refusal (engine/waits.ts), as a read's token need not grow.
-- `q` is {W, R, E, fence, queue, deadlines, tickets, rch, wch, how, retention}: rch and
-- wch the sides' wake-up channels (a waiter hears on its own side's).

-- R and E live as long as the longest read lease left, and go with the last reader.
local function rwExpire(q, now)
  local top = redis.call('zrange', q.E, -1, -1, 'withscores')
  local ttl = top[2] and tonumber(top[2]) - now or 0
  if ttl <= 0 or redis.call('hlen', q.R) == 0 then
    redis.call('del', q.R, q.E)
  else
    redis.call('pexpire', q.R, ttl)
    redis.call('pexpire', q.E, ttl)
  end
end

-- Drops dead readers (and their grants' marks) and dead waiters. True when any went.
local function rwPrune(q, now)
  local dropped = prune(q, now) > 0
  local dead = redis.call('zrangebyscore', q.E, '-inf', now)
  for _, owner in ipairs(dead) do
    redis.call('hdel', q.R, owner)
    redis.call('zrem', q.E, owner)
    if string.sub(redis.call('hget', q.tickets, owner) or '', 1, 2) == 'g ' then redis.call('hdel', q.tickets, owner) end
  end
  if #dead > 0 then rwExpire(q, now) end
  return dropped or #dead > 0
end

-- The side a queued owner waits for (nil: no ticket).
local function rwSide(q, owner)
  return string.match(redis.call('hget', q.tickets, owner) or '', '^w%w+ %d+ %d+ ([rw])$')
end

-- `owner` reads (one more level); its lease may grow, never shrink.
local function rwRead(q, owner, lease, now)
  redis.call('hincrby', q.R, owner, 1)
  if now + lease > tonumber(redis.call('zscore', q.E, owner) or '0') then redis.call('zadd', q.E, now + lease, owner) end
  rwExpire(q, now)
end

-- `owner`'s hold of `side` goes (its last level), and its grant's mark with it: a mark
-- stands only while its level does.
local function rwDrop(q, side, owner, now)
  if side == 'r' then
    redis.call('hdel', q.R, owner)
    redis.call('zrem', q.E, owner)
    rwExpire(q, now)
  else
    redis.call('del', q.W)
  end
  if string.sub(redis.call('hget', q.tickets, owner) or '', 1, 2) == 'g ' then redis.call('hdel', q.tickets, owner) end
end

-- The counter as it is, kept alive as a use of the name (0 when none is known): a read's token.
local function rwCurrent(q)
  if redis.call('pexpire', q.fence, q.retention) == 0 then return 0 end
  return tonumber(redis.call('get', q.fence))
end

-- The next grant's stamp (see above): afresh, the server's clock in us, as _mint.lua's.
local function rwStamp(q)
  local stamp = redis.call('hincrby', q.tickets, '#stamp', 1)
  if stamp == 1 then
    stamp = clockMicros()
    redis.call('hset', q.tickets, '#stamp', string.format('%.0f', stamp))
  end
  return string.format('%.0f', stamp)
end

-- Grants (grantTo) in arrival order while nobody writes: the writer at the head when no
-- other owner reads, or every reader at the head up to the first writer (a reader gets
-- in when no writer holds and none waits ahead of it). Deletes the tickets once nobody
-- holds or waits. Returns the grants' messages.
local function rwGrant(q, now)
  local grants = {}
  -- Nobody waits and no mark or stamp stands (the uncontended release): one command.
  if redis.call('exists', q.queue, q.tickets) == 0 then return grants end
  if redis.call('exists', q.W) == 1 then return grants end
  local queue = redis.call('lrange', q.queue, 0, -1)
  if #queue == 0 and redis.call('exists', q.R) == 0 then redis.call('del', q.tickets) end
  for i, owner in ipairs(queue) do
    local side = rwSide(q, owner)
    if side == 'w' and (i > 1 or redis.call('hlen', q.R) - redis.call('hexists', q.R, owner) > 0) then break end
    q.channel = side == 'r' and q.rch or q.wch
    local give = side and function(lease)
      local token
      if side == 'r' then
        rwRead(q, owner, lease, now)
        token = rwCurrent(q)
      else
        redis.call('hset', q.W, owner, 1)
        redis.call('pexpire', q.W, lease)
        token = mint(q.fence, q.retention)
      end
      if redis.call('pttl', q.tickets) < lease then redis.call('pexpire', q.tickets, lease) end
      return string.format('%.0f', token) .. ' ' .. rwStamp(q)
    end
    grants[#grants + 1] = grantTo(q, owner, now, give)
    if side ~= 'r' then break end
  end
  return grants
end
