import Redis, { Cluster } from 'ioredis';
import { LockClient, LockUnavailableError, type Connection } from '../../lib';
import { startCluster, type TestCluster } from '../kit/servers';
import { closeConnection, lockCluster } from '../helpers/clients';
import { contend, wakeDelay } from '../helpers/contention';
import { nextEvent, waitFor } from '../helpers/wait';

// The same lock over a real 3-master Redis Cluster: one slot per lock, sharded
// pub/sub waiting, watchdog batches split per slot. The locks' Cluster client is of the
// kind under test (helpers/clients.ts); `redis` (ioredis) only inspects and tampers.

const WATCHDOG = 600;
let cluster: TestCluster;
let redis: Cluster;
let conn: Connection;
const clients: LockClient[] = [];
let n = 0;
const name = () => `c-${++n}`;
const key = (lockName: string) => `holdfast:{${lockName}}`;

/** watchdogTimeout: short where renewals are what a case watches, else long enough for a loaded machine. */
function client(watchdogTimeout = WATCHDOG): LockClient {
  const c = new LockClient(conn, { watchdogTimeout });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 });
  redis = new Redis.Cluster(cluster.startupNodes);
  await redis.ping();
  conn = await lockCluster(cluster.startupNodes);
}, 60_000);
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await closeConnection(conn);
  redis.disconnect();
  await cluster.stop();
});

it('keeps key, channel and fencing counter in one slot', async () => {
  const lockName = name();
  const slots = await Promise.all([key(lockName), `${key(lockName)}:ch`, `${key(lockName)}:fence`].map((k) => redis.cluster('KEYSLOT', k)));
  expect(new Set(slots).size).toBe(1);
});

it('locks, reenters and unlocks through the cluster', async () => {
  const locks = client();
  const lock = locks.getLock(name());
  await locks.scope(async () => {
    await lock.lock();
    await lock.lock();
    expect(await lock.getHoldCount()).toBe(2);
    expect(await lock.remainTimeToLive()).toBeGreaterThan(0);
    await lock.unlock();
    await lock.unlock();
  });
  expect(await redis.exists(key(lock.name))).toBe(0);
});

it('wakes a waiter of another client promptly over sharded pub/sub', async () => {
  const a = client();
  const b = client();
  const lockName = name();
  const waiter = b.getLock(lockName);
  const node = await nodeOf(key(lockName));
  const shardSubscribers = async () => Number(((await node.call('PUBSUB', 'SHARDNUMSUB', `${key(lockName)}:next`)) as unknown[])[1]);
  const delay = await wakeDelay(a.getLock(lockName), waiter, async () => (await shardSubscribers()) === 1);
  expect(delay).toBeLessThan(200);
  await waiter.unlock();
  await waitFor(async () => (await shardSubscribers()) === 0, {
    message: 'shard subscription dropped',
  });
  node.disconnect();
});

it('renews holds spread over many slots', async () => {
  const locks = client();
  const handles = Array.from({ length: 30 }, () => locks.getLock(name()));
  await locks.scope(async () => {
    for (const h of handles) await h.lock();
    const renewed = new Set<string>();
    locks.on('renewed', (e) => renewed.add(e.name));
    await waitFor(() => renewed.size === handles.length, { timeout: WATCHDOG * 2, message: 'every hold renewed' });
    for (const h of handles) {
      const ttl = await h.remainTimeToLive();
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(WATCHDOG);
    }
    for (const h of handles) await h.unlock();
  });
  expect(await Promise.all(handles.map((h) => redis.exists(key(h.name))))).toEqual(handles.map(() => 0));
});

it('two clients on the cluster exclude each other under concurrency', async () => {
  // Exclusion is the point, not renewal: a 600 ms lease can run out on a loaded machine.
  const clients = [client(5_000), client(5_000)];
  const lockName = name();
  expect(await contend(10, 5, (i, body) => clients[i % 2].getLock(lockName).run(body))).toEqual({ maxInside: 1, sections: 50 });
});

it('reports a loss on the cluster like on one master', async () => {
  const locks = client();
  const lock = locks.getLock(name());
  await lock.lock();
  const lost = nextEvent<{ reason: string }>(lock, 'lost', WATCHDOG);
  await redis.del(key(lock.name));
  expect((await lost).reason).toBe('deleted');
});

it('runs a fair lock in one slot: queue, deadlines and channel beside the key', async () => {
  // Long leases: a waiter whose heartbeat is late past its lease leaves the queue (by
  // design), which would reorder it on a loaded machine; the order is what this checks.
  const locks = client(5_000);
  const lockName = name();
  const slots = await Promise.all(['', ':queue', ':deadlines', ':next'].map((s) => redis.cluster('KEYSLOT', `${key(lockName)}${s}`)));
  expect(new Set(slots).size).toBe(1);
  const holder = locks.getFairLock(lockName);
  await holder.lock();
  const order: number[] = [];
  const waiters: Promise<void>[] = [];
  for (let i = 0; i < 3; i++) {
    const other = client(5_000);
    const waiter = other.getFairLock(lockName).run(async () => void order.push(i), { waitTime: 5_000 });
    // Should a step below fail first, afterEach closes the clients and rejects this
    // wait: handled here, it does not pile unhandled rejections onto that failure.
    waiter.catch(() => undefined);
    waiters.push(waiter);
    await waitFor(async () => (await redis.llen(`${key(lockName)}:queue`)) === i + 1);
  }
  await holder.unlock();
  await Promise.all(waiters);
  expect(order).toEqual([0, 1, 2]);
  expect(await redis.exists(key(lockName))).toBe(0);
  expect(await redis.exists(`${key(lockName)}:queue`)).toBe(0);
});

/** A plain connection to the master that serves key's slot. */
async function nodeOf(k: string): Promise<Redis> {
  const slot = Number(await redis.cluster('KEYSLOT', k));
  const slots = (await redis.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  const owner = slots.find(([from, to]) => slot >= from && slot <= to)!;
  return new Redis(owner[2][1], '127.0.0.1');
}

it('a wait for a name whose node is down ends within its budget with LockUnavailableError, and works once the node is back', async () => {
  const lockName = name();
  const locks = new LockClient(conn, { watchdogTimeout: WATCHDOG, commandTimeout: 300 });
  clients.push(locks);
  const failed: unknown[] = [];
  locks.on('acquireFailed', (e) => failed.push(e.error));
  const slot = (await redis.cluster('KEYSLOT', key(lockName))) as number;
  const ranges = (await redis.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  const port = ranges.find(([from, to]) => from <= slot && slot <= to)![2][1];
  const node = cluster.nodes.find((s) => s.port === port)!;
  await node.kill();
  const start = performance.now();
  const error = await locks.getLock(lockName).tryLock(800).catch((e: unknown) => e);
  const waited = performance.now() - start;
  expect(error).toBeInstanceOf(LockUnavailableError);
  expect(waited).toBeGreaterThanOrEqual(800);
  expect(waited).toBeLessThan(800 + 300 + 500);
  expect(failed.length).toBeGreaterThan(0);
  await node.restart(); // rejoins with its slots (nodes.conf kept), keys gone
  await waitFor(() => locks.getLock(lockName).tryLock(0, 2_000).catch(() => false), { timeout: 20_000, message: 'locking works again' });
  await locks.getLock(lockName).forceUnlock();
});

// The read-write lock: every key of a name under its hash tag, so each script runs on
// the one master of that slot; waiters are woken by sharded pub/sub.
it('read-write lock: shares reads, excludes a writer, wakes waiters across clients, leaves nothing behind', async () => {
  // Names on several masters: each must work wherever its slot lives.
  for (const lockName of ['doc:1', 'doc:2', 'doc:3', 'doc:4']) {
    // Leases (and the queue's heartbeats) long enough for a loaded host: this case
    // watches exclusion and wake-ups, not renewals.
    const [a, b] = [client(5_000).getReadWriteLock(lockName), client(5_000).getReadWriteLock(lockName)];
    await a.readLock().lock();
    await b.readLock().lock();
    expect((await a.readLock().inspect()).holders).toHaveLength(2);
    const writing = b.writeLock().tryLock(5_000);
    await waitFor(async () => (await a.readLock().inspect()).waiters === 1, { message: 'the writer queued' });
    // Behind the waiting writer, a new reader of another owner waits too.
    const c = client(5_000).getReadWriteLock(lockName);
    const reading = c.readLock().tryLock(5_000);
    await waitFor(async () => (await a.readLock().inspect()).waiters === 2, { message: 'the reader queued' });
    await a.readLock().unlock();
    await b.readLock().unlock();
    expect(await writing).toBe(true);
    const token = await b.writeLock().inspect();
    await b.writeLock().unlock();
    expect(await reading).toBe(true);
    expect((await a.readLock().inspect()).token).toBe(token.token);
    await c.readLock().unlock();
    const left = [];
    for (const suffix of ['', ':read', ':readers', ':queue', ':deadlines']) left.push(await redis.exists(`${key(lockName)}${suffix}`));
    expect(left).toEqual([0, 0, 0, 0, 0]);
  }
}, 30_000);

it('read-write lock: renews read holds with the watchdog on their own master', async () => {
  const locks = client();
  const rw = locks.getReadWriteLock('renewed:1');
  let renewals = 0;
  locks.on('renewed', (e) => e.kind === 'read' && (renewals += 1));
  await rw.readLock().lock();
  await waitFor(() => renewals >= 3, { timeout: 3_000, message: 'three renewals' });
  expect(await rw.readLock().isLocked()).toBe(true);
  await rw.readLock().unlock();
  expect(await redis.exists(`${key(rw.name)}:read`)).toBe(0);
});
