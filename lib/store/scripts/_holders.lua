-- Shared prelude: tells every holder of a hold hash (fields: owner ids) on its client's
-- holder channel, `prefix` .. 'host:pid:client:' (the owner id up to its last ':';
-- engine/holder-channel.ts subscribes to it while the client holds anything), the
-- message `verb owner id`. Plain PUBLISH, never SPUBLISH: the channel is the client's,
-- not the name's, so it is in no slot of this script's keys (a Cluster broadcasts it;
-- requestRelease and forceUnlock are rare). Returns the owners told.
local function tellHolders(hash, prefix, verb, id)
  local owners = redis.call('hkeys', hash)
  for _, owner in ipairs(owners) do
    redis.call('publish', prefix .. (string.match(owner, '^(.*:)') or owner), verb .. ' ' .. owner .. ' ' .. id)
  end
  return owners
end
