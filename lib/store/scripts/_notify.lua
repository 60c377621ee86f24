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

