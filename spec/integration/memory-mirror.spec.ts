/**
 * The unit seam's memory scripts (spec/unit/helpers/memory-scripts.ts) against the real
 * Lua: the same seeded random sequence of operations - several owners of three clients
 * in two processes, attempts with and without a wait, releases, leaves, heartbeats, time
 * passing beyond heartbeat leases and leases - runs against the scripts on a real
 * redis-server and against the mirror over a MemoryRedis, and after every step the
 * replies, the messages published and every key of the names (type, content, PTTL) must
 * agree. The Lua is the truth: a divergence is a bug of the mirror.
 *
 * Time: the memory server's clock is set to the real server's TIME, read in the same
 * MULTI as the script, so both read one clock. Steps run in the first few ms of 60 ms
 * quanta, and every duration the scripts compare against (lease, half a lease,
 * heartbeat lease, twice it) ends a quarter of a quantum or more away from
 * a step, so no comparison of the two sides can fall on different sides of a deadline;
 * the remaining ms of drift is allowed on values that are times (PTTLs, ticket times,
 * deadlines). A step the host runs too late for that is not compared:
 * the memory server takes the real state, and the sequence goes on.
 */
import Redis from 'ioredis';
import { startServer, type RedisServer } from '../kit/servers';
import * as lockLua from '../../lib/primitives/lock/sources';
import * as sharedLua from '../../lib/store/scripts/sources';
import { NameKeys } from '../../lib/store/name-keys';
import { queueKeys, type QueueKeys } from '../../lib/store/name-keys';
import { MemoryRedis } from '../unit/helpers/memory-redis';
import * as mirror from '../unit/helpers/memory-scripts';

const Q = 60;
/** A step runs at most this many ms into its quantum (a quarter of one is the margin). */
const EARLY = 8;
/**
 * Ms of drift allowed on a time value: the scripts' clock is TIME, which the memory
 * server reads too, but Redis sets and checks expiries on its cached time of the
 * command, which lags TIME by some ms on a busy host.
 */
const DRIFT = 10;
const LEASES = [3.5 * Q, 5.5 * Q]; // expiries half a quantum off, half-leases a quarter
const HEARTBEAT = 4.25 * Q; // its deadline a quarter off, the queue's TTL (2x) half
const RETENTION = 3_600_000;
const STEPS = 170;
/** The names' fencing counters at the start: 2^52, past the clock in µs until 2112. */
const SEEDED = String(2 ** 52);

const QUORUM_MARK = 'holdfast:met:mirror';

let server: RedisServer;
let redis: Redis;
let sub: Redis;
/** Messages the real server published, in order, since the last step. */
let heard: [string, string][] = [];

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
  sub = new Redis(server.port, '127.0.0.1');
  await sub.psubscribe('*');
  // The clients' mark that acquire.lua finds (a server the client has met): the mirror
  // leaves the restart check, which reads INFO, to quorum.spec.
  await redis.set(QUORUM_MARK, '1');
  sub.on('pmessage', (_pattern: string, channel: string, message: string) => heard.push([channel, message]));
});

afterAll(async () => {
  sub.disconnect();
  redis.disconnect();
  await server.stop();
});

/** A time value: compared within DRIFT ms. */
class T {
  constructor(readonly ms: number) {}
}

/** Where `a` and `b` differ (T within DRIFT), or undefined. */
function differ(a: unknown, b: unknown, at = ''): string | undefined {
  if (a instanceof T && b instanceof T) return Math.abs(a.ms - b.ms) <= DRIFT ? undefined : `${at}: ${a.ms} vs ${b.ms}`;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${at}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
    for (let i = 0; i < a.length; i++) {
      const d = differ(a[i], b[i], `${at}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  return a === b ? undefined : `${at}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}

/** mulberry32: the sequence of a seed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every key of the names, with content and PTTL, read atomically on the real server. */
const DUMP = `
local out = {}
for i, k in ipairs(KEYS) do
  local t = redis.call('type', k).ok
  local v = {}
  if t == 'hash' then v = redis.call('hgetall', k)
  elseif t == 'list' then v = redis.call('lrange', k, 0, -1)
  elseif t == 'zset' then v = redis.call('zrange', k, 0, -1, 'withscores')
  elseif t == 'string' then v = {redis.call('get', k)} end
  out[i] = {t, v, redis.call('pttl', k)}
end
return {out, redis.call('time')}`;

type Kind = 'hash' | 'list' | 'zset' | 'string' | 'none';

/** A key's state as both sides are compared: times wrapped in T. */
function normal(key: string, kind: Kind, value: unknown, pttl: number): unknown {
  const time = (n: number | string) => new T(Number(n));
  let v: unknown = value;
  if (kind === 'hash') {
    v = (value as [string, string][]).map(([f, x]) => {
      // A ticket 'wait lease at' (its time), or a grant's mark 'g wait token'.
      const ticket = /^(w\w+) (\d+) (\d+)$/.exec(x);
      return ticket ? [f, [ticket[1], ticket[2], time(ticket[3])]] : [f, x];
    });
  } else if (kind === 'zset') {
    // In member order: the scores are times, and two within DRIFT of each other may sort
    // either way on the two sides.
    v = (value as [string, number | string][]).map(([m, score]): [string, T] => [m, time(score)]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
  return [key, kind, v, pttl < 0 ? pttl : time(pttl)];
}

function pairs<V>(flat: V[]): [V, V][] {
  const out: [V, V][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

/** A name's lock, as both sides see it. */
interface Name {
  readonly keys: NameKeys;
  /** Its queue's keys (mode 'queue'). */
  readonly q: QueueKeys;
  /** 'queue': the lock's queue scripts; 'quorum': acquire.lua and release.lua. */
  readonly mode: 'queue' | 'quorum';
}

/** One operation of the sequence: its real script and arguments, and its mirror. */
interface Op {
  readonly what: string;
  readonly lua: string;
  readonly keys: string[];
  readonly args: (string | number)[];
  readonly memory: (r: MemoryRedis) => unknown;
  /** Indexes of the reply that are times. */
  readonly times: (reply: number[]) => number[];
}

function context(n: Name): mirror.QueueContext {
  const k = n.keys;
  return { lock: k.key, fence: k.fence, ...n.q, channel: k.wakeChannel, retention: RETENTION };
}

function name(lockName: string, mode: Name['mode']): Name {
  const keys = new NameKeys(lockName, `holdfast:{${lockName}}`);
  return { keys, q: queueKeys(keys.key), mode };
}

function run(seed: number): Promise<void> {
  const rand = random(seed);
  const pick = <V>(xs: readonly V[]): V => xs[Math.floor(rand() * xs.length)];
  const names: Name[] = [
    name(`m${seed}-lock`, 'queue'),
    name(`m${seed}-fair`, 'queue'),
    name(`m${seed}-quorum`, 'quorum'),
  ];
  const owners = ['host:1:a:1', 'host:1:a:2', 'host:1:b:1', 'host:2:c:1'];
  /** Each owner's current wait id (a new wait takes the next). */
  const waits = new Map<string, number>(owners.map((o) => [o, 1]));
  let serverMs = 0;
  const memory = new MemoryRedis(() => serverMs, 0);
  const published: [string, string][] = [];
  memory.attach({ listens: () => true, deliver: (channel, message) => published.push([channel, message]) });

  const acquireOp = (n: Name, owner: string, lease: number, wait: string, grants: boolean): Op => {
    const { keys: k, q } = n;
    return {
      what: `queue-acquire ${k.name} ${owner} ${lease} '${wait}' grants=${grants}`,
      lua: lockLua.queueAcquire,
      keys: [k.key, k.fence, q.queue, q.deadlines, q.tickets],
      args: [owner, lease, wait, HEARTBEAT, RETENTION, 'publish', grants ? '1' : '0'],
      memory: (r) => mirror.queueAcquire(r, context(n), owner, lease, HEARTBEAT, wait, grants),
      times: (reply) => (reply[0] === 0 ? [1] : [2]),
    };
  };
  const releaseOp = (n: Name, owner: string, held: number, grants: boolean): Op => {
    const { keys: k, q } = n;
    return {
      what: `queue-release ${k.name} ${owner} ${held} grants=${grants}`,
      lua: lockLua.queueRelease,
      keys: [k.key, q.queue, q.deadlines, k.fence, q.tickets],
      args: [owner, held, RETENTION, 'publish', grants ? '1' : '0'],
      memory: (r) => mirror.queueRelease(r, context(n), owner, held, grants),
      times: () => [],
    };
  };
  /** Steps that follow from the last one, taken before new ones. */
  const followUps: Op[] = [];

  const next = (): Op => {
    const followUp = followUps.shift();
    if (followUp) return followUp;
    const n = pick([names[0], names[0], names[1], names[1], names[2]]);
    const { keys: k, q } = n;
    // Releases mostly by a holder and leaves mostly by a waiter, so that hand-offs happen.
    const among = (xs: string[]) => (xs.length > 0 && rand() < 0.75 ? pick(xs) : pick(owners));
    const holders = memory.hgetall(k.key).map(([o]) => o);
    const queued = n.mode === 'queue' ? memory.list(q.queue) : [];
    // Owners with a grant that a release made them and they have not taken up.
    const granted = n.mode === 'queue' ? memory.hgetall(q.tickets).filter(([, t]) => t.startsWith('g ')).map(([o]) => o) : [];
    let owner = pick(owners);
    const lease = pick(LEASES);
    if (n.mode === 'quorum') {
      if (rand() < 0.55) {
        return {
          what: `acquire ${k.name} ${owner} ${lease}`,
          lua: sharedLua.acquire,
          keys: [k.key, k.fence, QUORUM_MARK],
          args: [owner, lease, RETENTION],
          memory: (r) => mirror.acquire(r, k.key, k.fence, owner, lease, RETENTION),
          times: (reply) => (reply[0] === 0 ? [1] : []),
        };
      }
      const held = pick([1, 1, 2]);
      owner = among(holders);
      return { what: `release ${k.name} ${owner} ${held}`, lua: sharedLua.release, keys: [k.key], args: [owner, held, 'publish'], memory: (r) => mirror.release(r, k.key, owner, held), times: () => [] };
    }
    const grants = rand() < 0.9;
    const roll = rand();
    if (roll < 0.55) {
      // A wait's attempt (its heartbeat, the take-up of its grant; now and then a new
      // wait), or one attempt that never joins.
      owner = granted.length > 0 && rand() < 0.4 ? pick(granted) : among(queued);
      if (rand() < 0.1) waits.set(owner, waits.get(owner)! + 1);
      const wait = rand() < 0.85 ? `w${waits.get(owner)}` : '';
      return acquireOp(n, owner, lease, wait, grants);
    }
    if (roll < 0.88) {
      const held = pick([1, 1, 1, 2]);
      owner = among(holders);
      // A holder that re-locks at once: its next steps take the lock again without a
      // wait and give it back.
      if (holders.includes(owner) && rand() < 0.35) followUps.push(acquireOp(n, owner, lease, '', true), releaseOp(n, owner, 1, true));
      return releaseOp(n, owner, held, grants);
    }
    owner = among(queued);
    // Mostly the current wait; sometimes an earlier one, whose leave must touch nothing.
    const wait = `w${rand() < 0.8 ? waits.get(owner) : Math.max(1, waits.get(owner)! - 1)}`;
    return {
      what: `queue-leave ${k.name} ${owner} ${wait}`,
      lua: lockLua.queueLeave,
      keys: [k.key, q.queue, q.deadlines, q.tickets],
      args: [owner, wait, 'publish'],
      memory: (r) => {
        mirror.queueLeave(r, context(n), owner, wait);
        return 1;
      },
      times: () => [],
    };
  };

  const allKeys = names.flatMap((n) => (n.mode === 'quorum' ? [n.keys.key, n.keys.fence] : [n.keys.key, n.keys.fence, n.q.queue, n.q.deadlines, n.q.tickets]));
  const msOf = (time: [string, string]) => Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  const withTimes = (reply: unknown, times: number[]): unknown => (Array.isArray(reply) ? reply.map((x, i) => (times.includes(i) && typeof x === 'number' && x >= 0 ? new T(x) : x)) : reply);

  return (async () => {
    // Counters seeded alike, and above the clock in µs, which the two sides read at
    // different µs: the scripts then count tokens up by one on both. (The clock's part in
    // a token is retention.spec's: 'strictly increases tokens after a failover set the
    // counter back'.)
    const seeding = redis.multi().time();
    for (const n of names) seeding.set(n.keys.fence, SEEDED, 'PX', RETENTION);
    const [[, seededAt]] = (await seeding.exec()) as [[null, [string, string]]];
    serverMs = msOf(seededAt);
    for (const n of names) memory.set(n.keys.fence, SEEDED, RETENTION);
    const start = Date.now();
    let quantum = 0;
    const at = (q: number) => start + q * Q;
    const reach = async (q: number) => {
      quantum = q;
      while (Date.now() < at(q)) await new Promise((r) => setTimeout(r, Math.max(0, at(q) - Date.now() - 1)));
    };
    const log: string[] = [];
    let late = 0;
    for (let step = 0; step < STEPS; step++) {
      // Time passes (past heartbeats and leases, as the steps go on).
      if (rand() < 0.08) await reach(quantum + pick([1, 1, 2, 5]));
      // Every step early in its quantum: else on to the next one.
      while (Date.now() - at(quantum) > EARLY) await reach(quantum + 1);
      const op = next();

      heard = [];
      published.length = 0;
      const [[, time], [, reply]] = (await redis.multi().time().eval(op.lua, op.keys.length, ...op.keys, ...op.args).exec()) as [[null, [string, string]], [null, unknown]];
      serverMs = msOf(time);
      const opAt = serverMs;
      log.push(`${step} @${quantum}+${serverMs - at(quantum)}ms: ${op.what}`);
      const mine = op.memory(memory);
      const dump = (await redis.eval(DUMP, allKeys.length, ...allKeys)) as [[string, unknown[], number][], [string, string]];
      await sub.ping();
      serverMs = msOf(dump[1]);
      const real = dump[0].map(([kind, v, pttl]) => ({ kind: kind as Kind, value: kind === 'hash' || kind === 'zset' ? sortPairs(kind, pairs(v)) : kind === 'string' ? v[0] : kind === 'none' ? null : v, pttl }));
      // A step the host ran late (past the quarter quantum) may fall on a deadline: not
      // compared, the memory server takes the real state and the sequence goes on.
      if (opAt - at(quantum) > Q / 4 - 2 || serverMs - at(quantum) > Q / 2 - EARLY) {
        late += 1;
        allKeys.forEach((key, i) => memory.load(key, real[i].kind, real[i].value, real[i].pttl));
        continue;
      }
      const realState = real.map((d, i) => normal(allKeys[i], d.kind, d.value, d.pttl));
      const memoryState = allKeys.map((key) => {
        const d = memory.dump(key);
        return normal(key, d.kind, d.value, d.pttl);
      });
      const where =
        differ(withTimes(reply, Array.isArray(reply) ? op.times(reply as number[]) : []), withTimes(mine, Array.isArray(reply) ? op.times(reply as number[]) : []), 'reply') ??
        differ(heard, published, 'messages') ??
        differ(realState, memoryState, 'keys');
      if (where) throw new Error(`seed ${seed}, step ${step}: the mirror differs from the Lua at ${where}\n${log.slice(-12).join('\n')}`);
    }
    // Most steps compared (a host too busy for that makes the check say so).
    expect(late).toBeLessThan(STEPS / 4);
  })();
}

/** Real hashes in field order, sorted sets by score then member, as MemoryRedis.dump sorts them. */
function sortPairs(kind: 'hash' | 'zset', p: [unknown, unknown][]): [unknown, unknown][] {
  const str = p as [string, string][];
  if (kind === 'hash') return str.sort();
  return str.sort((a, b) => Number(a[1]) - Number(b[1]) || (a[0] < b[0] ? -1 : 1));
}

it.each([1, 2, 3])('the mirror answers, publishes and leaves keys as the Lua does (seed %i)', (seed) => run(seed), 20_000);
