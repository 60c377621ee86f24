-- Read-only: what `lock.inspect()` shows. KEYS[1] lock hash, KEYS[2] fencing counter,
-- KEYS[3] its queue (absent in quorum mode: no queue). Returns {pttl, last token or -1,
-- queue length, owner1, count1, ...}.
local out = {redis.call('pttl', KEYS[1]), tonumber(redis.call('get', KEYS[2]) or '-1'), KEYS[3] and redis.call('llen', KEYS[3]) or 0}
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields do out[#out + 1] = fields[i] end
return out
