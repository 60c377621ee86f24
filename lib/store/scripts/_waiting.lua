-- Shared prelude: the plain lock's list of waiting clients, so that a release wakes
-- one client (on that client's own channel: wakeClient) instead of every subscriber,
-- and turns pass between clients in order. KEYS: `waiting` (sorted set client id ->
-- when it joined, server ms: the order) and `alive` (client id -> deadline, server ms:
-- a client whose deadline passed died and leaves at the head). A client joins when its waiting
-- attempt is refused, keeps its place while it retries (each retry moves its
-- deadline), and leaves when it takes the lock or stops waiting.
-- Turns: while the head has headed the list for less than its turn, whoever comes
-- first may take the free lock (a client that re-locks at once keeps going without a
-- cross-process wake-up, which costs more than a section); after that the free lock is
-- the head's alone. With n clients on the list a turn is CYCLE_MS / n less WAKE_MS (the
-- wake-up that ends it), at most TURN_MS: the last of them waits about CYCLE_MS
-- however long the list is, and every client, once at the head, gets the lock for a
-- turn of its own (equal shares). Turns long enough for many sections each keep
-- wake-ups rare (a few per thousand sections with four busy clients); short enough that
-- no wait is long. A head's tenure starts when it joined or when the head before it was
-- served or left (the member '#head' of `alive`, never a client id, scored with that
-- time); a dead head dropped on the way marks nothing (it has had its time already).
-- All are fixed here, not sent with every call (each argument costs the client on the
-- hot path): ENTRY_LEASE is an entry's lease (the client reads it from this source, one
-- constant per line: its waiters retry three times per lease, which moves their
-- deadlines).
local TURN_MS = 50
local CYCLE_MS = 70
local WAKE_MS = 1
local ENTRY_LEASE = 3000

-- Wakes the waiting client `client` on its own channel (the lock's channel, ':', its id:
-- LockKeys.channel and WaitingList.channel), so that no other waiting client's
-- subscriber reads, parses and drops the message. Returns the receivers.
local function wakeClient(channel, client, how)
  return notify(channel .. ':' .. client, client, how)
end

-- Tells the waiting client `client`, which now heads the list with the lock held, that
-- its turn comes in `turnIn` ms: 'head:<ms>' on its own channel, so that it asks again
-- then without asking now (the lock is held: that ask would only be refused).
local function tellHead(channel, client, turnIn, how)
  return notify(channel .. ':' .. client, 'head:' .. math.max(0, math.ceil(turnIn)), how)
end

-- The server's clock in ms (fractional), never a client's.
local function clock()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end

-- The live head of the list: id, when it joined, and the clock; dead heads are dropped
-- on the way. nil when nobody waits (the clock is then not read). An entry younger than
-- its lease `entry` is alive (its deadline was at least that when it joined).
local function headOf(waiting, alive, entry)
  local now
  while true do
    local h = redis.call('zrange', waiting, 0, 0, 'withscores')
    if not h[1] then return nil, 0, now end
    now = now or clock()
    local since = tonumber(h[2])
    if now - since < entry or tonumber(redis.call('zscore', alive, h[1]) or '0') > now then return h[1], since, now end
    redis.call('zrem', waiting, h[1])
    redis.call('zrem', alive, h[1])
  end
end

-- How long until the turn of the head that joined at `since` comes (<= 0: it has come).
local function turnLeft(waiting, alive, since, now)
  local tenure = math.max(since, tonumber(redis.call('zscore', alive, '#head') or '0'))
  return tenure + math.min(TURN_MS, CYCLE_MS / redis.call('zcard', waiting) - WAKE_MS) - now
end

-- A new head's tenure starts `now`. A first mark may create `alive` (its waiters gone
-- meanwhile): it gets the list's TTL, so the mark never outlives the list.
local function markHead(alive, entry, now)
  if redis.call('zadd', alive, now, '#head') == 1 then redis.call('pexpire', alive, entry * 2) end
end

-- Takes `me` off the list (it got the lock, which it holds now). When it was the head,
-- the new head's tenure starts and it is told when its turn comes (tellHead), so it
-- retries then. `head` is the head before.
local function served(waiting, alive, entry, me, head, channel, how)
  if redis.call('zrem', waiting, me) == 0 then return end
  redis.call('zrem', alive, me)
  if head ~= me then return end
  local nxt, since, now = headOf(waiting, alive, entry)
  if not nxt then return end
  markHead(alive, entry, now)
  tellHead(channel, nxt, turnLeft(waiting, alive, since, now), how)
end
