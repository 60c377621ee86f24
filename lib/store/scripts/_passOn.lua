-- Shared prelude (fair-release.lua): a last release gives the free lock straight to the
-- queue's head instead of waking it to ask for it: one round trip and one message per
-- hand-off instead of a wake-up, an attempt and its reply while the lock stands idle.
--
-- The fair lock's tickets hash (KEYS `…:tickets`) holds, per waiting owner, the ticket
-- its last refused attempt left: 'wait lease at', where wait is the client's id of
-- that wait ('w…'), lease the hold's lease in ms and at the server's clock (ms) when
-- the attempt ran. A grant replaces it with 'g wait token' until the owner claims it:
-- the message ('owner wait token' on the owner's client channel) or the wait's next
-- attempt (fair-acquire.lua answers with the grant) claims it, whichever comes first;
-- a wait that ends without it leaves, and its leave gives the grant back
-- (fair-leave.lua). The owner's release drops the mark.
--
-- Every other way an owner takes the lock drops its ticket, so a mark stands only for
-- the level its grant gave, while the owner holds it. The client counts the lease from
-- the send of a refused attempt of the wait that ran before the grant (its reply carries
-- the last token, below the grant's: FairWaits). A ticket older than half its lease is
-- not granted (the hold would start with too little of it left): the head is woken to
-- ask, as without tickets
-- (another holdfast version, or syncReplicas: its WAIT must follow a grant, which the
-- releasing client's call cannot do for another).
-- Returns the grant's message when the head was granted (the releasing client hands it
-- to its own wait at once when the head is one: no wait for the message), else nil.
local function passOn(lock, fence, queue, deadlines, tickets, head, now, channel, how, retention, direct)
  local wait, lease, at = string.match(redis.call('hget', tickets, head) or '', '^(w%w+) (%d+) (%d+)$')
  lease = tonumber(lease)
  if direct ~= '1' or not wait or now - tonumber(at) > lease / 2 then
    wakeOwner(channel, head, how)
    return nil
  end
  redis.call('lpop', queue)
  redis.call('zrem', deadlines, head)
  if redis.call('llen', queue) == 0 then redis.call('del', queue, deadlines) end
  redis.call('hset', lock, head, 1)
  redis.call('pexpire', lock, lease)
  local token = string.format('%.0f', mint(fence, retention))
  redis.call('hset', tickets, head, 'g ' .. wait .. ' ' .. token)
  local message = head .. ' ' .. wait .. ' ' .. token
  notify(channel .. ':' .. (string.match(head, '^(.*:)') or head), message, how)
  return message
end
