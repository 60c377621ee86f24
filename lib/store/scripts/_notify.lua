-- Shared prelude (scripts/embed-lua.mjs puts it in front of every script that calls
-- notify): publish on a lock's channel, sharded (SPUBLISH, Redis 7+ in a Cluster) when
-- asked, falling back to PUBLISH on servers without it. Returns the receivers.
local function notify(channel, message, how)
  if how == 'spublish' then
    local receivers = redis.pcall('spublish', channel, message)
    if type(receivers) == 'number' then return receivers end
  end
  return redis.call('publish', channel, message)
end

-- Wakes the queue's waiter `owner` on its client's own channel: the wake-up
-- channel, ':', and the owner id up to its last ':' (host:pid:client:, see
-- handles/owner-id.ts; engine/key-watch.ts subscribes to it), so that no other client's subscriber
-- reads, parses and drops the message. Returns the receivers.
local function wakeOwner(channel, owner, how)
  return notify(channel .. ':' .. (string.match(owner, '^(.*:)') or owner), owner, how)
end
