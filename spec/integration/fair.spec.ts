import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import Redis from 'ioredis';
import { LockClient, LockError, type Connection } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { CLIENT, closeConnection, lockConnection } from '../helpers/clients';
import { observeChannels } from '../helpers/channel-observer';
import { commandCalls } from '../helpers/command-stats';
import { takeTurns } from '../helpers/contention';
import { TcpProxy } from '../kit/proxy';
import * as sources from '../../lib/primitives/lock/sources';
import { nextEvent, timerAt, waitFor, withTimeout } from '../helpers/wait';

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
/** The fair lock's keys other than its counter: what a name leaves behind once nobody holds or waits. */
const fairKeys = (lockName: string) => [key(lockName), ...['queue', 'deadlines', 'tickets'].map((s) => `${key(lockName)}:${s}`)];

function client(watchdogTimeout = 1_000): LockClient {
  const c = new LockClient(conn, { watchdogTimeout });
  clients.push(c);
  return c;
}

function child(args: string[]): { proc: ChildProcess; output: () => string } {
  const proc = spawn(process.execPath, ['-r', 'tsx/cjs', 'spec/fixtures/fair-waiter.ts', ...args], {
    cwd: path.resolve(__dirname, '..', '..'),
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
  await waitFor(async () => (await redis.exists(...fairKeys(lockName).slice(1))) === 0, { timeout: 2_000, message: 'queue emptied' });
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

describe("a release grants the free lock to the queue's head", () => {
  let proxy: TcpProxy;
  /** Closed once their clients are (the file's afterEach closes the clients). */
  const farConnections: Connection[] = [];
  beforeAll(async () => {
    proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
  });
  afterEach(() => proxy.resume());
  afterAll(async () => {
    await Promise.all(farConnections.map(closeConnection));
    await proxy.close();
  });

  /** A client whose connections (commands and pub/sub) go through the proxy; a 30 s heartbeat lease, so no heartbeat falls in a test. */
  async function farClient(watchdogTimeout = 30_000): Promise<LockClient> {
    const far = await lockConnection(proxy.port);
    farConnections.push(far);
    const c = new LockClient(far, { watchdogTimeout });
    clients.push(c);
    return c;
  }

  /** Ports (as proxy.upstreamPorts has them) of the proxied connections subscribed to something, once there is one. */
  async function proxiedSubscribers(): Promise<number[]> {
    const read = async () =>
      String(await redis.client('LIST'))
        .split('\n')
        .filter((line) => / sub=[1-9]/.test(line))
        .map((line) => Number(/ addr=[^ ]*:(\d+) /.exec(line)?.[1]))
        .filter((port) => proxy.upstreamPorts.includes(port));
    await waitFor(async () => (await read()).length > 0, { message: 'a subscriber through the proxy' });
    return read();
  }

  it('in the release itself: the head holds it before it has read a word from Redis, with the token the release minted', async () => {
    const lockName = name();
    const holder = client().getFairLock(lockName);
    await holder.lock();
    const head = (await farClient()).getFairLock(lockName);
    const waiting = head.acquire();
    await waitFor(async () => (await queueLength(lockName)) === 1, { message: 'the head in the queue' });
    proxy.delayReplies();
    await holder.unlock();
    // Nothing has reached the head's client since: the grant is the release's doing.
    const info = await holder.inspect();
    expect(info.holders).toHaveLength(1);
    expect(info.holders[0].count).toBe(1);
    expect(await queueLength(lockName)).toBe(0);
    proxy.deliverReplies();
    const held = await waiting;
    expect(held.token).toBe(info.token);
    expect((await holder.inspect()).holders[0].owner).toBe(info.holders[0].owner);
    await held.release();
    expect(await redis.exists(...fairKeys(lockName))).toBe(0);
  });

  it("hands the grant to the head at once when the head is a wait of the releasing client: no wait for the message", async () => {
    const lockName = name();
    const locks = await farClient();
    const first = await locks.getFairLock(lockName).acquire();
    // A wait first, so that the client's subscription is there (lingering) when the
    // measured wait begins: that one is watched before its first attempt, and sleeps on it.
    const warm = locks.getFairLock(lockName).acquire();
    await waitFor(async () => (await queueLength(lockName)) === 1, { message: 'the warm-up wait in the queue' });
    await first.release();
    const second = await warm;
    const waiting = locks.getFairLock(lockName).acquire();
    await waitFor(async () => (await queueLength(lockName)) === 1, { message: 'the second in the queue' });
    proxy.delayReplies(await proxiedSubscribers());
    await second.release();
    // Without the release's reply the head would wait for its next heartbeat (10 s) and take the grant then.
    const held = await withTimeout(waiting, 2_000, 'the head took the grant from the release reply');
    expect(held.token).toBe(Number(await redis.get(`${key(lockName)}:fence`)));
    await held.release();
    proxy.deliverReplies();
    expect(await redis.exists(...fairKeys(lockName))).toBe(0);
  });

  it('never takes up a grant whose message comes after the grant was gone: expired, and the lock taken by another', async () => {
    const lockName = name();
    const k = key(lockName);
    // The holder is a bare script call, so that the test can release it and end the grant
    // in one transaction: no attempt of the head's can take the grant in between.
    const holderOwner = 'h:1:x:1';
    await redis.eval(sources.queueAcquire, 5, k, `${k}:fence`, `${k}:queue`, `${k}:deadlines`, `${k}:tickets`, holderOwner, 10_000, '', 30_000, 86_400_000);
    // Heartbeats every third of a second: the wait asks again while its grant's message is held back.
    const headClient = await farClient(1_000);
    const acquired: number[] = [];
    headClient.on('acquired', (e) => acquired.push(e.token));
    const waiting = headClient.getFairLock(lockName).acquire({ leaseTime: 300 });
    await waitFor(async () => (await queueLength(lockName)) === 1, { message: 'the head in the queue' });
    const headOwner = (await redis.lrange(`${k}:queue`, 0, 0))[0];
    const ticket = () => redis.hget(`${k}:tickets`, headOwner);
    // Its next refusal comes after its subscription is in place (the first came before).
    const joined = await ticket();
    await waitFor(async () => (await ticket()) !== joined, { timeout: 2_000, message: 'a refusal once subscribed' });
    proxy.delayReplies(await proxiedSubscribers());
    // The release grants the head; the grant ends at once (as when its lease runs out unread).
    await redis
      .multi()
      .eval(sources.queueRelease, 5, k, `${k}:queue`, `${k}:deadlines`, `${k}:fence`, `${k}:tickets`, holderOwner, 1, 86_400_000)
      .del(k)
      .exec();
    const stale = Number(await redis.get(`${k}:fence`));
    const other = await client().getFairLock(lockName).acquire();
    expect(other.token).toBeGreaterThan(stale);
    // The head asks again (a heartbeat), refused: it queues anew, after the grant was gone.
    await waitFor(async () => (await queueLength(lockName)) === 1, { timeout: 2_000, message: 'the head queued again' });
    proxy.deliverReplies();
    // Two more refusals after the message came in: the wait has read it by then.
    const first = await ticket();
    await waitFor(async () => (await ticket()) !== first, { timeout: 2_000, message: 'a refusal after the message' });
    const second = await ticket();
    await waitFor(async () => (await ticket()) !== second, { timeout: 2_000, message: 'another refusal' });
    expect(acquired).toEqual([]);
    await other.release();
    const held = await waiting;
    expect(held.token).toBeGreaterThan(other.token);
    expect(acquired).toEqual([held.token]);
    await held.release();
  });

  it('gives a grant its wait never read back when the wait is aborted, and the next waiter gets the lock', async () => {
    const lockName = name();
    const holder = client().getFairLock(lockName);
    await holder.lock();
    const controller = new AbortController();
    const headClient = await farClient();
    const acquired: string[] = [];
    headClient.on('acquired', (e) => acquired.push(e.owner));
    const waiting = headClient.getFairLock(lockName).lock({ signal: controller.signal });
    await waitFor(async () => (await queueLength(lockName)) === 1, { message: 'the head in the queue' });
    const next = client().getFairLock(lockName);
    const nextWaiting = next.acquire();
    await waitFor(async () => (await queueLength(lockName)) === 2, { message: 'the second in the queue' });
    proxy.delayReplies();
    await holder.unlock();
    expect((await holder.inspect()).holders).toHaveLength(1);
    controller.abort(new Error('gave up'));
    proxy.deliverReplies();
    await expect(waiting).rejects.toThrow('gave up');
    const held = await nextWaiting;
    expect(acquired).toEqual([]);
    const info = await next.inspect();
    expect(info.holders).toHaveLength(1);
    expect(held.token).toBe(info.token);
    await held.release();
    expect(await redis.exists(...fairKeys(lockName))).toBe(0);
  });
});

describe('queue-acquire.lua, queue-release.lua and queue-leave.lua with a grant', () => {
  const heartbeat = 30_000;
  const lease = 10_000;
  const run = (script: string, lockName: string, keys: string[], args: (string | number)[]) => redis.eval(script, keys.length, ...keys.map((s) => (s === '' ? key(lockName) : `${key(lockName)}:${s}`)), ...args);
  const acquire = (lockName: string, owner: string, wait: string) => run(sources.queueAcquire, lockName, ['', 'fence', 'queue', 'deadlines', 'tickets'], [owner, lease, wait, heartbeat, 60_000]) as Promise<number[]>;
  const release = (lockName: string, owner: string) => run(sources.queueRelease, lockName, ['', 'queue', 'deadlines', 'fence', 'tickets'], [owner, 1, 60_000]);
  const leave = (lockName: string, owner: string, wait: string) => run(sources.queueLeave, lockName, ['', 'queue', 'deadlines', 'tickets'], [owner, wait, 'publish']);
  /** Owner a holds the lock, the waits [owner, wait id] queue behind it in order, a releases: the first is granted. */
  async function grantFirst(lockName: string, waits: [string, string][]): Promise<void> {
    await acquire(lockName, 'h:1:a:1', '');
    for (const [owner, wait] of waits) await acquire(lockName, owner, wait);
    await release(lockName, 'h:1:a:1');
    expect(await redis.hgetall(key(lockName))).toEqual({ [waits[0][0]]: '1' });
  }

  it("answers the granted wait's next attempt with that grant, not a level more; the owner's other calls reenter", async () => {
    const lockName = name();
    expect(await acquire(lockName, 'h:1:a:1', '')).toEqual([1, expect.any(Number)]);
    expect(await acquire(lockName, 'h:1:b:1', 'w1')).toEqual([0, expect.any(Number), 1, Number(await redis.get(`${key(lockName)}:fence`))]);
    const counter = Number(await redis.get(`${key(lockName)}:fence`));
    // The grant's message in the reply too, for a head that is a wait of the releasing client.
    const [code, grant] = (await release(lockName, 'h:1:a:1')) as [number, string];
    expect(code).toBe(2);
    const token = Number(/^h:1:b:1 w1 (\d+)$/.exec(grant)?.[1]);
    expect(token).toBeGreaterThan(counter);
    expect(Number(await redis.get(`${key(lockName)}:fence`))).toBe(token);
    expect(await redis.hgetall(key(lockName))).toEqual({ 'h:1:b:1': '1' });
    expect(await redis.pttl(key(lockName))).toBeGreaterThan(lease - 1_000);
    // The grant's lease runs from the release: the reply says what is left of it.
    const [, taken, left] = await acquire(lockName, 'h:1:b:1', 'w1');
    expect(taken).toBe(token);
    expect(left).toBeGreaterThan(lease - 1_000);
    expect(left).toBeLessThanOrEqual(lease);
    expect(await redis.hgetall(key(lockName))).toEqual({ 'h:1:b:1': '1' });
    // Taken: the same wait's next call is a reentry.
    expect(await acquire(lockName, 'h:1:b:1', 'w1')).toEqual([1, token]);
    expect(await redis.hgetall(key(lockName))).toEqual({ 'h:1:b:1': '2' });
  });

  it('tells an attempt that finds the lock free and grants it to the head that it heads the queue itself then', async () => {
    const lockName = name();
    await acquire(lockName, 'h:1:a:1', '');
    await acquire(lockName, 'h:1:b:1', 'w1');
    // a's hold ends without a release (its lease ran out): free, with b at the head.
    await redis.del(key(lockName));
    const reply = await acquire(lockName, 'h:1:c:1', 'w2');
    expect(await redis.hgetall(key(lockName))).toEqual({ 'h:1:b:1': '1' });
    expect(await redis.lrange(`${key(lockName)}:queue`, 0, -1)).toEqual(['h:1:c:1']);
    // The head sleeps at most until the holder's lease ends; any other waiter a third of its heartbeat.
    expect(reply).toEqual([0, expect.any(Number), 1, Number(await redis.get(`${key(lockName)}:fence`))]);
  });

  it("gives back only the level a wait's unread grant made, when that wait leaves", async () => {
    const lockName = name();
    await grantFirst(lockName, [
      ['h:1:b:1', 'w1'],
      ['h:1:c:1', 'w2'],
    ]);
    // Another wait's leave does not give it back.
    await leave(lockName, 'h:1:b:1', 'w9');
    expect(await redis.hgetall(key(lockName))).toEqual({ 'h:1:b:1': '1' });
    await leave(lockName, 'h:1:b:1', 'w1');
    expect(await redis.exists(key(lockName))).toBe(0);
    expect(await redis.lrange(`${key(lockName)}:queue`, 0, -1)).toEqual(['h:1:c:1']);
    expect(await acquire(lockName, 'h:1:c:1', 'w2')).toEqual([1, expect.any(Number)]);
    await release(lockName, 'h:1:c:1');
    expect(await redis.exists(...fairKeys(lockName))).toBe(0);
  });

  it("never gives back, with a wait's leave, a level its owner took another way after that wait's grant was gone", async () => {
    const lockName = name();
    await grantFirst(lockName, [['h:1:b:1', 'w1']]);
    // The grant's lease runs out unread; the same owner takes the free lock with another call.
    await redis.del(key(lockName));
    expect(await acquire(lockName, 'h:1:b:1', '')).toEqual([1, expect.any(Number)]);
    await leave(lockName, 'h:1:b:1', 'w1');
    expect(await redis.hgetall(key(lockName))).toEqual({ 'h:1:b:1': '1' });
    await release(lockName, 'h:1:b:1');
    expect(await redis.exists(...fairKeys(lockName))).toBe(0);
  });

  it('wakes a head whose ticket is older than half its lease instead of granting it', async () => {
    const lockName = name();
    await acquire(lockName, 'h:1:a:1', '');
    await acquire(lockName, 'h:1:b:1', 'w1');
    // The ticket as a refusal 6 s ago (lease 10 s) would have left it.
    const [wait, ticketLease, at] = (await redis.hget(`${key(lockName)}:tickets`, 'h:1:b:1'))!.split(' ');
    await redis.hset(`${key(lockName)}:tickets`, 'h:1:b:1', `${wait} ${ticketLease} ${Number(at) - 6_000}`);
    expect(await release(lockName, 'h:1:a:1')).toEqual([2]);
    expect(await redis.exists(key(lockName))).toBe(0);
    expect(await acquire(lockName, 'h:1:b:1', 'w1')).toEqual([1, expect.any(Number)]);
    await release(lockName, 'h:1:b:1');
    expect(await redis.exists(...fairKeys(lockName))).toBe(0);
  });
});

it('counts a grant whose message was lost from no later than the grant: the waiter hears lost before the key expires', async () => {
  const lockName = name();
  const holder = client(30_000).getFairLock(lockName);
  await holder.lock();
  // Heartbeat 1.5 s: the waiter asks again every 500 ms, and takes the grant up then.
  const waiter = client(1_500).getFairLock(lockName);
  const lease = 2_000;
  const got = waiter.lock(lease);
  await waitFor(async () => (await queueLength(lockName)) === 1 && ((await redis.pubsub('CHANNELS', `*${lockName}*`)) as string[]).length > 0, { message: 'the waiter queued and subscribed' });
  // Right after one of the waiter's heartbeats (its ticket is rewritten), so that its
  // next attempt, which takes the grant up, comes most of a heartbeat after the grant.
  const tickets = `${key(lockName)}:tickets`;
  const ticket = await redis.hvals(tickets);
  await waitFor(async () => JSON.stringify(await redis.hvals(tickets)) !== JSON.stringify(ticket), { interval: 2, message: 'a heartbeat of the waiter' });
  // The grant's message is lost: the subscriber connections are dropped as it goes out.
  await redis.client('KILL', 'TYPE', 'pubsub');
  await holder.unlock();
  // Set once the key's expiry is known; a loss heard before then is heard before it.
  let expiry: ReturnType<typeof timerAt> | undefined;
  const lost = nextEvent<{ reason: string }>(waiter, 'lost', 10_000).then((e) => ({ ...e, afterExpiry: expiry?.passed ?? false }));
  await withTimeout(got, 5_000, 'the waiter took the grant up');
  const asked = performance.now();
  const pttl = await redis.pttl(key(lockName));
  // The key expires no earlier than this; the waiter's client-side deadline must come first.
  const expiresAt = asked + pttl;
  expiry = timerAt(expiresAt);
  const { reason, afterExpiry } = await lost;
  expiry.clear();
  expect(reason).toBe('expired');
  expect(afterExpiry).toBe(false);
}, 20_000);
