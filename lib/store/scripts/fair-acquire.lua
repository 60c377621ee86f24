-- Fair lock: take the lock only in queue order. KEYS[1] lock hash, KEYS[2] fencing
-- counter, KEYS[3] queue (list of waiting owners, oldest first), KEYS[4] waiter
-- deadlines (sorted set owner -> ms, by the server's clock), KEYS[5] tickets (owner ->
-- its wait's ticket or grant, see _passOn.lua).
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] waiter heartbeat lease ms,
-- ARGV[4] '1' to join (or stay in) the queue when not granted, '0' for one attempt,
-- ARGV[5] wake-up channel, ARGV[6] 'publish' or 'spublish', ARGV[7] key retention ms
-- (the counter's TTL; the queue's is two heartbeat leases, see below), ARGV[8] the
-- wait's id when joining ('' for none: the release then wakes it instead of granting).
-- Returns {1, token} when held, {1, token, pttl} when this takes up a grant a release
-- made earlier (its lease runs from the grant, so the caller counts what is left of
-- it, not a lease from its own send), {0, pttl, isHead, counter} otherwise: counter,
-- the name's last token, dates the refusal for a grant that comes in a message (FairWaits).
local lock, fence, queue, deadlines, tickets = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, lease, ttl, retention = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[7])
local wait = ARGV[8] or ''

-- Free, nobody queued and no ticket left (the uncontended call): taken, without reading
-- the clock. A ticket left (a grant's mark that outlived its grant) goes the long way,
-- which drops the owner's: a mark stands only for a level its grant gave (fair-leave.lua).
if redis.call('exists', lock, queue, tickets) == 0 then
  redis.call('hset', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return {1, mint(fence, retention)}
end

-- The server's clock, never the clients': waiters on hosts with skewed clocks must
-- neither evict live waiters nor keep dead ones (Redisson's fair lock trusts clients).
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Waiters whose heartbeat stopped (their process died) leave the queue.
for _, dead in ipairs(redis.call('zrangebyscore', deadlines, '-inf', now)) do
  redis.call('lrem', queue, 0, dead)
  redis.call('zrem', deadlines, dead)
  redis.call('hdel', tickets, dead)
end

if redis.call('hexists', lock, owner) == 1 then
  -- This wait was granted the lock by a release (_passOn.lua) and has not read the
  -- message yet: the grant, not another level.
  if wait ~= '' then
    local granted = string.match(redis.call('hget', tickets, owner) or '', '^g ' .. wait .. ' (%d+)$')
    if granted then
      redis.call('hdel', tickets, owner)
      return {1, tonumber(granted), redis.call('pttl', lock)}
    end
  end
  redis.call('hincrby', lock, owner, 1)
  if redis.call('pttl', lock) < lease then redis.call('pexpire', lock, lease) end
  redis.call('pexpire', fence, retention)
  return {1, tonumber(redis.call('get', fence) or '0')}
end

local head = redis.call('lindex', queue, 0)
if redis.call('exists', lock) == 0 then
  if not head or head == owner then
    redis.call('hdel', tickets, owner)
    if head then
      redis.call('lpop', queue)
      redis.call('zrem', deadlines, owner)
      if redis.call('llen', queue) == 0 then redis.call('del', queue, deadlines, tickets) end
    end
    redis.call('hset', lock, owner, 1)
    redis.call('pexpire', lock, lease)
    return {1, mint(fence, retention)}
  end
  -- Free, but it is the head's turn: make sure the head knows (it may have just
  -- become head because a dead waiter before it was dropped).
  wakeOwner(ARGV[5], head, ARGV[6])
end

if ARGV[4] == '1' then
  if not redis.call('zscore', deadlines, owner) then
    redis.call('rpush', queue, owner)
    if not head then head = owner end
  end
  redis.call('zadd', deadlines, now + ttl, owner)
  if wait ~= '' then redis.call('hset', tickets, owner, wait .. ' ' .. ARGV[2] .. ' ' .. now) end
  -- The queue outlives its last heartbeat by at most two heartbeat leases: no leak
  -- when every waiter dies.
  for _, k in ipairs({queue, deadlines, tickets}) do
    if redis.call('pttl', k) < ttl * 2 then redis.call('pexpire', k, ttl * 2) end
  end
end
return {0, redis.call('pttl', lock), head == owner and 1 or 0, tonumber(redis.call('get', fence) or '0')}
