-- Shared prelude: the plain lock's list of waiting clients, so that a release wakes
-- one client (on that client's own channel: wakeClient) instead of every subscriber,
-- and turns pass between clients in order. KEYS: `waiting` (sorted set client id ->
-- when it joined, server ms: the order) and `alive` (client id -> deadline, server ms:
-- a client whose deadline passed died and leaves at the head). A client joins when its waiting
-- attempt is refused, keeps its place while it retries (each retry moves its
-- deadline), and leaves when it takes the lock or stops waiting.
-- Turns: while the head's turn runs, whoever comes first may take the free lock (a
-- client that re-locks at once keeps going without a cross-process wake-up, which costs
-- more than a section); after that the free lock is the head's alone. With n clients on
-- the list a turn is CYCLE_MS / n less WAKE_MS (the wake-up that ends it), at most
-- TURN_MS: the last of them waits about CYCLE_MS however long the list is, and every
-- client, once at the head, gets the lock for a turn of its own (equal shares). Turns
-- long enough for many sections each keep wake-ups rare (a few per thousand sections
-- with four busy clients); short enough that no wait is long. The running turn is two
-- members of `alive` (never client ids): '#head', scored with the head's tenure start,
-- and '#turn', scored with when its turn ends, so a call during the turn reads one score
-- and the clock, not the list. A tenure starts when a client joins an empty list, or
-- when the head before it was served or left; a client joining behind the head shortens
-- the turn to the new share. A dead head dropped on the way starts nothing (it has had
-- its time already).
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

-- The live head of the list: id, when it joined, and the clock (`now` when the caller
-- read it already); dead heads are dropped on the way. nil when nobody waits (the clock
-- is then not read). An entry younger than its lease `entry` is alive (its deadline was
-- at least that when it joined).
local function headOf(waiting, alive, entry, now)
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

-- The turn of a head whose tenure starts now, for the list's length now (ms; may be <= 0).
local function turnFor(waiting)
  return math.min(TURN_MS, CYCLE_MS / redis.call('zcard', waiting) - WAKE_MS)
end

-- A new head's tenure starts `now`. `alive` exists (it holds the head's entry); should
-- it not, it gets the list's TTL, so the marks never outlive the list.
local function startTurn(waiting, alive, entry, now)
  redis.call('zadd', alive, now, '#head', now + turnFor(waiting), '#turn')
  if redis.call('pttl', alive) < 0 then redis.call('pexpire', alive, entry * 2) end
end

-- A client joined behind the head: the running turn shrinks to the new share.
local function shrinkTurn(waiting, alive, now)
  local tenure = redis.call('zscore', alive, '#head')
  if not tenure then return end
  local ends = tonumber(tenure) + turnFor(waiting)
  if ends < tonumber(redis.call('zscore', alive, '#turn') or '0') then redis.call('zadd', alive, ends, '#turn') end
end

-- Ms until the running turn ends (<= 0: it has ended, or none runs).
local function turnLeft(alive, now)
  return tonumber(redis.call('zscore', alive, '#turn') or '0') - now
end

-- Takes `me` off the list (it got the lock, which it holds now). When it was the head,
-- the next head's tenure starts and it is told when its turn ends (tellHead), so it
-- retries then.
local function served(waiting, alive, entry, me, channel, how)
  local rank = redis.call('zrank', waiting, me)
  if not rank then return end
  redis.call('zrem', waiting, me)
  redis.call('zrem', alive, me)
  if rank ~= 0 then return end
  local nxt, _, now = headOf(waiting, alive, entry)
  if not nxt then return end
  startTurn(waiting, alive, entry, now)
  tellHead(channel, nxt, turnLeft(alive, now), how)
end
