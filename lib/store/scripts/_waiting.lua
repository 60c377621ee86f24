-- Shared prelude: the plain lock's list of waiting clients, so that a release wakes
-- one client (on that client's own channel: wakeClient) instead of every subscriber,
-- and turns pass between clients in order. KEYS: `waiting` (sorted set client id ->
-- when it joined, server ms: the order) and `alive` (client id -> deadline, server ms:
-- a client whose deadline passed died and leaves at the head). A client joins when its waiting
-- attempt is refused, keeps its place while it retries (each retry moves its
-- deadline), and leaves when it takes the lock or stops waiting.
-- Turns: while the head has waited less than `turn` ms, whoever comes first may take
-- the free lock (the releasing client's next section costs no wake-up in another
-- process), at most BARGE_MAX times (a count kept as the member '#barged' of `alive`,
-- never a client id, reset when a head is served); after that the free lock is the
-- head's alone. Every wait at the head is bounded by `turn` plus one wake-up, and
-- by BARGE_MAX sections of others: without the count, the releasing client, always
-- first at the free lock, kept it for the whole turn (16 clients on one key: 63 to
-- 2,176 sections per client in 3 s).
-- All are fixed here, not sent with every call (each argument costs the client on the
-- hot path): TURN_MS is `turn`, ENTRY_LEASE an entry's lease (the client reads it from
-- this source, one constant per line: its waiters retry three times per lease, which
-- moves their deadlines).
local TURN_MS = 50
local ENTRY_LEASE = 3000
local BARGE_MAX = 8

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

-- One more grant ahead of the waiting head: returns how many since a head was last
-- served. A first count may create `alive` (its waiters gone meanwhile): it gets the
-- list's TTL, so the count never outlives the list.
local function barged(alive, entry)
  local n = tonumber(redis.call('zincrby', alive, 1, '#barged'))
  if n == 1 then redis.call('pexpire', alive, entry * 2) end
  return n
end

-- Takes `me` off the list (it got the lock, which it holds now). When it was the head,
-- a new head that has not waited `turn` yet is told when its turn comes (tellHead), so
-- it retries then (an older one is named by the next release). `head` is the head before.
local function served(waiting, alive, entry, me, head, turn, channel, how)
  if redis.call('zrem', waiting, me) == 0 then return end
  redis.call('zrem', alive, me)
  if head ~= me then return end
  redis.call('zrem', alive, '#barged')
  local nxt, since, now = headOf(waiting, alive, entry)
  if nxt and now - since < turn then tellHead(channel, nxt, since + turn - now, how) end
end
