-- Shared prelude: tells holders on their client's holder channel, `prefix` ..
-- 'host:pid:client:' (the owner id up to its last ':'; engine/holder-channel.ts
-- subscribes to it while the client holds anything), the message `verb owner id`.
-- Plain PUBLISH, never SPUBLISH: the channel is the client's, not the name's, so it is
-- in no slot of this script's keys (a Cluster broadcasts it; requestRelease and
-- forceUnlock are rare). Returns the owners told.
local function tellOwners(owners, prefix, verb, id)
  for _, owner in ipairs(owners) do
    redis.call('publish', prefix .. (string.match(owner, '^(.*:)') or owner), verb .. ' ' .. owner .. ' ' .. id)
  end
  return owners
end

-- Tells every holder of a hold hash: its fields that are owner ids (they have a ':'; a
-- semaphore's hash also keeps 'limit', 'used', 'stamp' and 'keep').
local function tellHolders(hash, prefix, verb, id)
  local owners = {}
  for _, field in ipairs(redis.call('hkeys', hash)) do
    if string.find(field, ':', 1, true) then owners[#owners + 1] = field end
  end
  return tellOwners(owners, prefix, verb, id)
end
