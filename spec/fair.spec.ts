import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import Redis from 'ioredis';
import { LockClient, LockError, type Connection } from '../lib';
import { startServer, type RedisServer } from '../scripts/servers';
import { CLIENT, closeConnection, lockConnection } from './helpers/clients';
import { observeChannels } from './helpers/channel-observer';
import { commandCalls } from './helpers/command-stats';
import { takeTurns } from './helpers/contention';
import { nextEvent, waitFor } from './helpers/wait';

// The fair lock: granted strictly in request order across processes, dead waiters
// leave the queue within one heartbeat lease, live ones never do.

let server: RedisServer;
/** Admin connection (ioredis); the lock's own is `conn`, of the kind under test (helpers/clients). */
let redis: Redis;
let conn: Connection;
const clients: LockClient[] = [];
const children: ChildProcess[] = [];
let n = 0;
const name = () => `fair-${++n}`;
const key = (lockName: string) => `holdfast:{${lockName}}`;
const queueLength = (lockName: string) => redis.llen(`${key(lockName)}:queue`);

function client(watchdogTimeout = 1_000): LockClient {
  const c = new LockClient(conn, { watchdogTimeout });
  clients.push(c);
  return c;
}

function child(args: string[]): { proc: ChildProcess; output: () => string } {
  const proc = spawn(process.execPath, ['-r', 'tsx/cjs', 'spec/fixtures/fair-waiter.ts', ...args], {
    cwd: path.resolve(__dirname, '..'),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  children.push(proc);
  return { proc, output: () => out };
}

function exited(proc: ChildProcess, timeout: number): Promise<number | null> {
  if (proc.exitCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('child did not exit')), timeout);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
  conn = await lockConnection(server.port);
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  redis.disconnect();
  await closeConnection(conn);
  await server.stop();
});

it('grants 10 processes the lock in the order they asked', async () => {
  const lockName = name();
  const listKey = `order:${lockName}`;
  // A lease that outlives ten children booting on a loaded host: with 1 s, a renewal
  // starved of CPU let the hold expire, and the first child took the lock unqueued.
  const holder = client(10_000).getFairLock(lockName);
  await holder.lock();
  const waiters = Array.from({ length: 10 }, (_, i) => child([String(server.port), lockName, String(i), listKey, '5000']));
  await waitFor(() => waiters.every((w) => w.output().includes('ready')), { timeout: 30_000, message: 'children started' });
  for (let i = 0; i < waiters.length; i++) {
    waiters[i].proc.stdin!.write('go\n');
    await waitFor(async () => (await queueLength(lockName)) === i + 1, { timeout: 5_000, message: `waiter ${i} queued` });
  }
  await holder.unlock();
  const codes = await Promise.all(waiters.map((w) => exited(w.proc, 15_000)));
  expect(codes).toEqual(waiters.map(() => 0));
  expect(await redis.lrange(listKey, 0, -1)).toEqual(waiters.map((_, i) => String(i)));
  // Nothing left behind but the fencing counter.
  expect(await redis.exists(key(lockName), `${key(lockName)}:queue`, `${key(lockName)}:deadlines`)).toBe(0);
  await redis.del(listKey);
}, 60_000);

it('does not let a newcomer barge in ahead of the queue', async () => {
  const lockName = name();
  const holder = client().getFairLock(lockName);
  await holder.lock();
  const waiting = client().getFairLock(lockName).tryLock(5_000);
  await waitFor(async () => (await queueLength(lockName)) === 1);
  await holder.unlock();
  expect(await client().getFairLock(lockName).tryLock()).toBe(false);
  expect(await waiting).toBe(true);
});

it('drops a waiter killed with SIGKILL within one heartbeat lease', async () => {
  const lockName = name();
  const holder = client().getFairLock(lockName);
  await holder.lock();
  const dying = child([String(server.port), lockName, '0', `order:${lockName}`, '1000']);
  await waitFor(() => dying.output().includes('ready'), { timeout: 15_000 });
  dying.proc.stdin!.write('go\n');
  await waitFor(async () => (await queueLength(lockName)) === 1, { timeout: 5_000, message: 'child queued' });
  const next = client(1_000).getFairLock(lockName);
  let gotAt = 0;
  const waiting = next.lock().then(() => (gotAt = performance.now()));
  await waitFor(async () => (await queueLength(lockName)) === 2, { message: 'second waiter queued behind the child' });
  dying.proc.kill('SIGKILL');
  const killedAt = performance.now();
  await holder.unlock();
  await waiting;
  // The dead entry expires one heartbeat lease after its last heartbeat (at most at the
  // kill), and the next waiter notices on its own heartbeat (a third of its lease).
  expect(gotAt - killedAt).toBeLessThan(1_000 + 1_000 / 3 + 300);
  await next.unlock();
  expect(await redis.lrange(`order:${lockName}`, 0, -1)).toEqual([]);
});

it('keeps a live waiter queued across many heartbeat leases', async () => {
  const lockName = name();
  // The waiter's heartbeat lease is its client's watchdogTimeout (300 ms); the holder's
  // lease is longer so that a loaded machine cannot expire the holder meanwhile, and its
  // renewals (about one a third of 1,200 ms) are the clock: 5 of them span > 3 heartbeat leases.
  const holder = client(1_200).getFairLock(lockName);
  await holder.lock();
  const waiter = client(300).getFairLock(lockName);
  const waiting = waiter.tryLock(10_000);
  await waitFor(async () => (await queueLength(lockName)) === 1);
  const started = performance.now();
  for (let i = 0; i < 5; i++) await nextEvent(holder, 'renewed', 3_000);
  expect(performance.now() - started).toBeGreaterThan(3 * 300);
  expect(await queueLength(lockName)).toBe(1);
  await holder.unlock();
  expect(await waiting).toBe(true);
});

it('removes an aborted waiter from the queue at once', async () => {
  const lockName = name();
  const holder = client().getFairLock(lockName);
  await holder.lock();
  const controller = new AbortController();
  // A 6 s heartbeat lease: left behind, the entry would stay at least 4 s; the bound
  // below leaves a loaded host time and still tells a leave from an expiry.
  const waiting = client(6_000).getFairLock(lockName).lock({ signal: controller.signal });
  await waitFor(async () => (await queueLength(lockName)) === 1);
  controller.abort(new Error('gave up'));
  await expect(waiting).rejects.toThrow('gave up');
  await waitFor(async () => (await redis.exists(`${key(lockName)}:queue`, `${key(lockName)}:deadlines`)) === 0, { timeout: 2_000, message: 'queue emptied' });
  await holder.unlock();
});

it('leaves the queue before close() resolves, and rejects the wait with "client closed"', async () => {
  const lockName = name();
  const holder = client().getFairLock(lockName);
  await holder.lock();
  // A 6 s heartbeat lease: an entry left behind would stay seconds, not milliseconds.
  const closing = client(6_000);
  const waiting = closing.getFairLock(lockName).lock().catch((error: unknown) => error);
  await waitFor(async () => (await queueLength(lockName)) === 1, { message: 'the waiter in the queue' });
  await closing.close();
  // Read at once, not waited for.
  expect(await queueLength(lockName)).toBe(0);
  expect(await waiting).toBeInstanceOf(LockError);
  await holder.unlock();
});

it('leaves the queue when tryLock(wait) runs out', async () => {
  const lockName = name();
  const holder = client().getFairLock(lockName);
  await holder.lock();
  expect(await client().getFairLock(lockName).tryLock(200)).toBe(false);
  // tryLock settles as the leave is sent: ioredis writes it at once, ahead of the admin's
  // EXISTS; node-redis writes on setImmediate, so the leave may land just after.
  if (CLIENT === 'ioredis') expect(await redis.exists(`${key(lockName)}:queue`)).toBe(0);
  else await waitFor(async () => (await redis.exists(`${key(lockName)}:queue`)) === 0, { timeout: 1_000, message: 'left the queue' });
  await holder.unlock();
});

it('reenters in a scope and is renewed by the watchdog like getLock', async () => {
  const locks = client(400);
  const lock = locks.getFairLock(name());
  await locks.scope(async () => {
    const outer = await lock.acquire();
    await lock.lock();
    expect(await lock.getHoldCount()).toBe(2);
    await nextEvent(lock, 'renewed', 1_500);
    await nextEvent(lock, 'renewed', 1_500);
    const ttl = await lock.remainTimeToLive();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(400);
    await lock.unlock();
    await outer.release();
  });
  expect(await lock.isLocked()).toBe(false);
});

it('serves local waiters of one client in order too', async () => {
  const locks = client();
  const lock = locks.getFairLock(name());
  await lock.lock();
  const order: number[] = [];
  const waiters: Promise<void>[] = [];
  for (let i = 0; i < 5; i++) {
    const waiter = locks.scope(async () => {
      await lock.lock();
      order.push(i);
      await lock.unlock();
    });
    waiter.catch(() => undefined); // a failure below must not add unhandled rejections to it
    waiters.push(waiter);
    await waitFor(async () => (await queueLength(lock.name)) === i + 1);
  }
  await lock.unlock();
  await Promise.all(waiters);
  expect(order).toEqual([0, 1, 2, 3, 4]);
});

it("wakes the queue's head on its client's own channel, never on the key's, which every client with a fair waiter reads", async () => {
  const lockName = name();
  const channels = await observeChannels(redis, `${key(lockName)}:next`);
  try {
    const held = client().getFairLock(lockName);
    await held.lock();
    const waiter = client().getFairLock(lockName);
    const waited = waiter.lock();
    await waitFor(async () => (await queueLength(lockName)) === 1, { message: 'the waiter in the queue' });
    await held.unlock();
    await waited;
    await waiter.unlock();
    expect(await channels.counts()).toEqual({ own: 1, shared: 0 });
  } finally {
    channels.close();
  }
});

it('keeps its subscription while two clients take turns, and drops it once nobody waits', async () => {
  const lockName = name();
  const before = await commandCalls(redis, 'subscribe', 'ssubscribe');
  const sections = await takeTurns([client(), client()].map((locks) => locks.getFairLock(lockName)), 30);
  expect(Math.min(...sections)).toBeGreaterThanOrEqual(30);
  // Each client subscribes once (two channels: the key's and its own, see FairWaits): a
  // waiter that comes back within the linger (200 ms) is subscribed before its first
  // attempt. Without the linger, a subscribe and an unsubscribe around nearly every
  // waited section.
  expect((await commandCalls(redis, 'subscribe', 'ssubscribe')) - before).toBeLessThanOrEqual(8);
  await waitFor(async () => Number((await redis.pubsub('NUMSUB', `${key(lockName)}:next`))[1]) === 0, { timeout: 2_000, message: 'subscription dropped after the linger' });
});
