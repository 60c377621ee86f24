/**
 * The semaphore's hand-off floor: the least a semaphore that keeps arrival order can send.
 * Permits held in a hash (id -> permits, '#used' their sum) with each one's expiry in a
 * sorted set, pruned by the next acquire; a refused caller joins a list with what it
 * wants and a heartbeat deadline; a release gives the freed permits to the live waiters
 * at the head that fit, in order (none passes one that does not), and tells each on its
 * client's channel: one round trip per release and one message per grant, no retry.
 * Minimal Lua, no library around it: no reentry, resend rules, limit check, watchdog or
 * failure handling; a waiter whose message is lost looks again after HANDOFF_RECHECK_MS.
 *
 * A reference row of the semaphore scenario (never a peer): with arrival order kept,
 * how fast can any semaphore pass permits between workers, in the same run as
 * redis-semaphore, whose releasing worker takes its permits straight back while the
 * others poll.
 */
import type Redis from 'ioredis';
import { MAX_WAIT_MS } from '../config';
import { quitAll } from './connect';
import { loadScripts } from './raw';
import type { Worker } from './types';

const ENTRY_LEASE = 3_000;
const HANDOFF_RECHECK_MS = 1_000;

// KEYS: holders, expiry, queue, wants (id -> 'permits client lease'), alive (id -> deadline).
// ARGV: id, permits, limit, lease, client. Returns 1 held, 0 queued.
const ACQUIRE = `local holders, expiry, queue, wants, alive = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, want, limit, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, dead in ipairs(redis.call('zrangebyscore', expiry, '-inf', now)) do
  redis.call('hincrby', holders, '#used', -tonumber(redis.call('hget', holders, dead) or '0'))
  redis.call('hdel', holders, dead)
  redis.call('zrem', expiry, dead)
end
if redis.call('llen', queue) == 0 and tonumber(redis.call('hget', holders, '#used') or '0') + want <= limit then
  redis.call('hset', holders, id, want)
  redis.call('hincrby', holders, '#used', want)
  redis.call('zadd', expiry, now + lease, id)
  redis.call('pexpire', holders, lease)
  redis.call('pexpire', expiry, lease)
  return 1
end
redis.call('rpush', queue, id)
redis.call('hset', wants, id, want .. ' ' .. ARGV[5] .. ' ' .. lease)
redis.call('zadd', alive, now + ${ENTRY_LEASE}, id)
redis.call('pexpire', queue, ${2 * ENTRY_LEASE})
redis.call('pexpire', wants, ${2 * ENTRY_LEASE})
redis.call('pexpire', alive, ${2 * ENTRY_LEASE})
return 0`;

// KEYS as ACQUIRE. ARGV: id, limit, channel prefix. Returns 0 not held, 1 released.
const RELEASE = `local holders, expiry, queue, wants, alive = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local held = redis.call('hget', holders, ARGV[1])
if not held then return 0 end
redis.call('hdel', holders, ARGV[1])
redis.call('zrem', expiry, ARGV[1])
local used = redis.call('hincrby', holders, '#used', -tonumber(held))
local limit = tonumber(ARGV[2])
local now
while true do
  local head = redis.call('lindex', queue, 0)
  if not head then return 1 end
  if not now then
    local t = redis.call('time')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  local permits, client, lease = string.match(redis.call('hget', wants, head) or '', '^(%d+) (%S+) (%d+)$')
  local live = tonumber(redis.call('zscore', alive, head) or '0') > now
  if live and permits and used + tonumber(permits) > limit then return 1 end
  redis.call('lpop', queue)
  redis.call('hdel', wants, head)
  redis.call('zrem', alive, head)
  if live and permits then
    redis.call('hset', holders, head, permits)
    used = redis.call('hincrby', holders, '#used', tonumber(permits))
    redis.call('zadd', expiry, now + tonumber(lease), head)
    redis.call('pexpire', holders, lease)
    redis.call('pexpire', expiry, lease)
    redis.call('publish', ARGV[3] .. client, head)
  end
end`;

/**
 * Workers on `connections` (worker w on connection w % n, as a client each), each asking
 * `permitsOf(w)` of `limit` under `lease`.
 */
export function semaphoreHandoff(name: string, connections: Redis[], workers: number, limit: number, lease: number, permitsOf: (w: number) => number): { workers: Worker[]; close(): Promise<void> } {
  const key = `semhandoff:{${name}}`;
  const keys = [key, `${key}:expiry`, `${key}:queue`, `${key}:wants`, `${key}:alive`];
  const prefix = `${key}:ch:`;
  const clients = connections.map((conn, c) => {
    const id = `s${process.pid}-${c}`;
    // id of a waiting acquire -> its wake.
    const waiting = new Map<string, () => void>();
    const sub = conn.duplicate();
    sub.on('message', (_channel: string, granted: string) => waiting.get(granted)?.());
    const ready = Promise.all([sub.subscribe(prefix + id), loadScripts([conn], ACQUIRE, RELEASE)]).then(([, shas]) => shas);
    return { id, conn, sub, waiting, ready, seq: 0 };
  });
  return {
    workers: Array.from({ length: workers }, (_, w): Worker => {
      const client = clients[w % clients.length]!;
      let id = '';
      return {
        async acquire() {
          const [acquireSha] = await client.ready;
          id = `${client.id}:${++client.seq}`;
          const message = new Promise<void>((resolve) => client.waiting.set(id, resolve));
          try {
            if ((await client.conn.evalsha(acquireSha!, keys.length, ...keys, id, permitsOf(w), limit, lease, client.id)) === 1) return;
            const giveUp = performance.now() + MAX_WAIT_MS;
            for (;;) {
              let timer: NodeJS.Timeout | undefined;
              const recheck = new Promise<void>((resolve) => (timer = setTimeout(resolve, HANDOFF_RECHECK_MS)));
              const woken = await Promise.race([message.then(() => true), recheck.then(() => false)]);
              clearTimeout(timer);
              if (woken || (await client.conn.hexists(keys[0]!, id)) === 1) return;
              if (performance.now() > giveUp) throw new Error(`semaphore hand-off floor: not acquired within ${MAX_WAIT_MS} ms`);
            }
          } finally {
            client.waiting.delete(id);
          }
        },
        async release() {
          const [, releaseSha] = await client.ready;
          if ((await client.conn.evalsha(releaseSha!, keys.length, ...keys, id, limit, prefix)) === 0) throw new Error('semaphore hand-off floor release: not held');
        },
      };
    }),
    close: () => quitAll(clients.map((c) => c.sub)),
  };
}
