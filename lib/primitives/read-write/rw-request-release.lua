-- Read-write lock: ask every holder of one side to let go (requestRelease); nothing is
-- changed. KEYS[1] W, KEYS[2] R, KEYS[3] E (see _rwqueue.lua).
-- ARGV[1] 'r' or 'w', ARGV[2] holder channel prefix, ARGV[3] the side's hold id in clients.
-- Returns the owners asked: the writer, or every reader whose own lease has not run out.
if ARGV[1] == 'w' then return tellHolders(KEYS[1], ARGV[2], 'revoke', ARGV[3]) end
local live = {}
for _, owner in ipairs(redis.call('zrangebyscore', KEYS[3], '(' .. string.format('%.0f', clock()), '+inf')) do
  if redis.call('hexists', KEYS[2], owner) == 1 then live[#live + 1] = owner end
end
return tellOwners(live, ARGV[2], 'revoke', ARGV[3])
