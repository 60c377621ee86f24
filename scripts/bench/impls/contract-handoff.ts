/**
 * The contract's hand-off floor: DESIGN.md's data (hash owner -> count under a lease,
 * fencing counter with retention) with a strict hand-off instead of barging. A refused
 * worker joins a waiting list (ordered by server time, with a deadline per entry and
 * the owner it waits as); a release that frees the lock gives it straight to the live
 * head (its owner, a token minted) and tells that worker on its own channel, so each
 * cross-client hand-off costs the release's round trip and one message, no retry.
 * Minimal Lua, no library around it, no reentry, resend rules or failure handling: a
 * worker whose message is lost asks again after HANDOFF_RECHECK_MS and finds the lock
 * already its own.
 *
 * A reference row between clients and between processes with no think time (never a
 * peer, not charted): with bounded waits and equal shares, how fast can any lock of the
 * contract's shape pass the lock from client to client, in the same run as the peers
 * that barge and poll.
 */
import type Redis from 'ioredis';
import { LEASE, MAX_WAIT_MS } from '../config';
import { connect, quitAll } from './connect';
import { RETENTION } from './contract-floor';
import { loadScripts } from './raw';
import type { ImplDef, Runner } from './types';

const ENTRY_LEASE = 3_000;
const HANDOFF_RECHECK_MS = 1_000;

// KEYS: lock, fence, waiting (client -> joined), alive (client -> deadline), wants
// (client -> owner|lease). ARGV: owner, lease, client. Returns the token, or 0 (listed).
const ACQUIRE = `local key, fence, waiting, alive, wants = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if redis.call('hexists', key, ARGV[1]) == 1 then return tonumber(redis.call('get', fence)) end
if redis.call('exists', key) == 0 then
  redis.call('hset', key, ARGV[1], 1)
  redis.call('pexpire', key, ARGV[2])
  local token = redis.call('incr', fence)
  redis.call('pexpire', fence, ${RETENTION})
  return token
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
redis.call('zadd', waiting, 'NX', now, ARGV[3])
redis.call('zadd', alive, now + ${ENTRY_LEASE}, ARGV[3])
redis.call('hset', wants, ARGV[3], ARGV[1] .. '|' .. ARGV[2])
redis.call('pexpire', waiting, ${2 * ENTRY_LEASE})
redis.call('pexpire', alive, ${2 * ENTRY_LEASE})
redis.call('pexpire', wants, ${2 * ENTRY_LEASE})
return 0`;
// KEYS as ACQUIRE. ARGV: owner. Returns 0 not held, 1 released, 2 handed off.
const RELEASE = `local key, fence, waiting, alive, wants = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if redis.call('hexists', key, ARGV[1]) == 0 then return 0 end
redis.call('del', key)
local now
while true do
  local head = redis.call('zrange', waiting, 0, 0)[1]
  if not head then return 1 end
  if not now then
    local t = redis.call('time')
    now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
  end
  local live = tonumber(redis.call('zscore', alive, head) or '0') > now
  local want = redis.call('hget', wants, head)
  redis.call('zrem', waiting, head)
  redis.call('zrem', alive, head)
  redis.call('hdel', wants, head)
  if live and want then
    local owner, lease = string.match(want, '^(.*)|(%d+)$')
    redis.call('hset', key, owner, 1)
    redis.call('pexpire', key, lease)
    local token = redis.call('incr', fence)
    redis.call('pexpire', fence, ${RETENTION})
    -- The grant as a library would send it: whose, and its token.
    redis.call('publish', key .. ':ch:' .. head, owner .. ' ' .. token)
    return 2
  end
end`;
let clientSeq = 0;

async function openContractHandoff(ports: number[]): Promise<Runner> {
  if (ports.length !== 1) throw new Error('contract hand-off floor: one master only');
  const [conn, sub] = await Promise.all([connect(ports[0]), connect(ports[0])]);
  const [acquireSha, releaseSha] = await loadScripts([conn], ACQUIRE, RELEASE);
  // Owner -> the wake of its pending acquire; a grant reads '<owner> <token>'.
  const granted = new Map<string, () => void>();
  sub.on('message', (_channel: string, grant: string) => granted.get(grant.slice(0, grant.lastIndexOf(' ')))?.());
  return {
    worker(name) {
      const key = `handoff:{${name}}`;
      const keys = [key, `${key}:fence`, `${key}:waiting`, `${key}:alive`, `${key}:wants`];
      const client = `h${process.pid}-${++clientSeq}`;
      const subscribed = sub.subscribe(`${key}:ch:${client}`);
      let seq = 0;
      let owner = '';
      const acquireOnce = () => conn.evalsha(acquireSha, 5, ...keys, owner, LEASE, client) as Promise<number>;
      return {
        async acquire() {
          await subscribed;
          owner = `${client}:${++seq}`;
          const giveUp = performance.now() + MAX_WAIT_MS;
          const message = new Promise<void>((resolve) => granted.set(owner, resolve));
          try {
            while ((await acquireOnce()) === 0) {
              if (performance.now() > giveUp) throw new Error(`contract hand-off floor: not acquired within ${MAX_WAIT_MS} ms`);
              let timer: NodeJS.Timeout | undefined;
              const recheck = new Promise<void>((resolve) => (timer = setTimeout(resolve, HANDOFF_RECHECK_MS)));
              const woken = await Promise.race([message.then(() => true), recheck.then(() => false)]);
              clearTimeout(timer);
              if (woken) return;
            }
          } finally {
            granted.delete(owner);
          }
        },
        async release() {
          const reply = (await conn.evalsha(releaseSha, 5, ...keys, owner)) as number;
          if (reply === 0) throw new Error('contract hand-off floor release: not held');
        },
      };
    },
    close: () => quitAll([conn, sub]),
  };
}

export const CONTRACT_HANDOFF: ImplDef = { id: 'contract-handoff', label: "contract hand-off floor (DESIGN.md's hash + fencing, release grants the head)", family: 'contract-floor', open: openContractHandoff };
