import { spawn } from 'node:child_process';
import path from 'node:path';
import Redis, { type RedisOptions } from 'ioredis';
import { LockClient, LockLostError, type Connection, type LostEvent } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { TcpProxy } from '../kit/proxy';
import { CLIENT, closeConnection, lockConnection } from '../helpers/clients';
import { nextEvent, waitFor } from '../helpers/wait';
import { commandCalls } from '../helpers/command-stats';

// The watchdog keeps a hold without a lease alive for as long as it is held, and a
// hold that can no longer be renewed is reported lost no later than its lease end.

const WATCHDOG = 600; // renewals every 200 ms
let server: RedisServer;
let redis: Redis;
let n = 0;
const name = () => `wd-${++n}`;
const key = (lockName: string) => `holdfast:{${lockName}}`;
const clients: LockClient[] = [];
const connections: Connection[] = [];
/** The lock's connection, of the kind under test (helpers/clients); `redis` is the admin's (ioredis). */
let conn: Connection;

function client(connection: Connection = conn, watchdogTimeout = WATCHDOG): LockClient {
  const c = new LockClient(connection, { watchdogTimeout });
  clients.push(c);
  return c;
}

/**
 * The lock's connection, of the kind under test. ioredis takes `options`; node-redis has
 * no maxRetriesPerRequest (a command waits in its offline queue) and takes only the
 * retry delay of retryStrategy.
 */
async function connect(port: number, options: RedisOptions = {}): Promise<Connection> {
  let c: Connection;
  if (CLIENT === 'ioredis') {
    const io = new Redis({ port, host: '127.0.0.1', ...options });
    io.on('error', () => undefined);
    c = io;
  } else {
    c = await lockConnection(port, options.retryStrategy ? { retryDelay: 20 } : {});
  }
  connections.push(c);
  return c;
}

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
  conn = await lockConnection(server.port);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(connections.splice(0).map(closeConnection));
});
afterAll(async () => {
  redis.disconnect();
  await closeConnection(conn);
  await server.stop();
});

describe('renewal', () => {
  it('keeps PTTL within (0, watchdogTimeout] over several leases and sends nothing after unlock', async () => {
    const locks = client();
    const lock = locks.getLock(name());
    const clock = locks.getLock(name()); // a second hold whose renewals mark the ticks
    await lock.lock();
    await clock.lock();
    const ttls: number[] = [];
    const renewedNames: string[] = [];
    locks.on('renewed', (e) => renewedNames.push(e.name));
    const start = performance.now();
    while (performance.now() - start < WATCHDOG * 3) {
      await nextEvent(lock, 'renewed', WATCHDOG);
      ttls.push(await redis.pttl(key(lock.name)));
    }
    expect(ttls.length).toBeGreaterThanOrEqual(6);
    for (const ttl of ttls) {
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(WATCHDOG);
    }
    await lock.unlock();
    expect(await redis.exists(key(lock.name))).toBe(0);
    renewedNames.length = 0;
    await nextEvent(clock, 'renewed', WATCHDOG);
    await nextEvent(clock, 'renewed', WATCHDOG);
    expect(renewedNames.filter((n) => n === lock.name)).toEqual([]);
    expect(await redis.exists(key(lock.name))).toBe(0);
    await clock.unlock();
  });

  it('renews many holds in one round trip per tick, and reentries add no renewals', async () => {
    const locks = client();
    const handles = Array.from({ length: 50 }, () => locks.getLock(name()));
    await locks.scope(async () => {
      for (const h of handles) await h.lock();
      await handles[0].lock(); // reentries
      await handles[0].lock();
      const before = await evalshaCalls();
      const renewed: string[] = [];
      locks.on('renewed', (e) => renewed.push(e.name));
      await waitFor(() => renewed.length >= 100, { timeout: WATCHDOG * 3, message: 'two rounds of renewals' });
      const calls = (await evalshaCalls()) - before;
      // Two ticks' worth of 50 holds: a handful of script calls, not 100.
      expect(calls).toBeLessThanOrEqual(6);
      expect(renewed.filter((n) => n === handles[0].name).length).toBeLessThanOrEqual(Math.ceil(renewed.length / 50) + 1);
      for (const h of handles) while ((await h.getHoldCount()) > 0) await h.unlock();
    });
    expect(await Promise.all(handles.map((h) => redis.exists(key(h.name))))).toEqual(handles.map(() => 0));
  });

  it('does not renew a hold taken with a lease, and reports it lost when the lease ends', async () => {
    const locks = client();
    const lock = locks.getLock(name());
    let renewed = 0;
    lock.on('renewed', () => renewed++);
    const start = performance.now();
    await lock.lock(300);
    const lost = await nextEvent<LostEvent>(lock, 'lost', 1_000);
    expect(lost.reason).toBe('expired');
    expect(performance.now() - start).toBeLessThan(300 + 100);
    expect(renewed).toBe(0);
    await expect(lock.unlock()).rejects.toBeInstanceOf(LockLostError);
  });
});

const evalshaCalls = () => commandCalls(redis, 'evalsha');

describe('loss detection', () => {
  it('outside every scope, unlock() after a lease ran out and the lock was taken again releases the live hold first', async () => {
    const locks = client();
    const lock = locks.getLock(name());
    const lost = nextEvent<LostEvent>(lock, 'lost', 2_000);
    await lock.lock(200); // leased: lost ('expired') when the lease ends
    expect((await lost).reason).toBe('expired');
    await lock.lock(); // a second, live hold of the same handle
    await lock.unlock(); // the live one goes, not the lost one
    expect(await redis.exists(key(lock.name))).toBe(0);
    await expect(lock.unlock()).rejects.toBeInstanceOf(LockLostError); // then the lost one answers
    await expect(lock.unlock()).rejects.toThrow(/holds it in no scope/);
  });

  it.each([
    ['deleted', 'DEL of the key'],
    ['taken', 'another owner took it after a DEL'],
  ])('reports %s (%s) within one renewal period and aborts the scoped signal', async (reason) => {
    const locks = client();
    const other = client();
    const lock = locks.getLock(name());
    let signal: AbortSignal | undefined;
    const running = lock.run(async (ctx) => {
      signal = ctx.signal;
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
      return 'fn finished';
    });
    await waitFor(() => signal);
    const lostEvent = nextEvent<LostEvent>(lock, 'lost', WATCHDOG);
    const at = performance.now();
    await redis.del(key(lock.name));
    if (reason === 'taken') await other.getLock(lock.name).lock(5_000);
    const lost = await lostEvent;
    const delay = performance.now() - at;
    expect(lost.reason).toBe(reason);
    expect(delay).toBeLessThan(WATCHDOG / 3 + 150);
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toBeInstanceOf(LockLostError);
    // run() rejects after fn settled, and the new owner's key is untouched.
    await expect(running).rejects.toBeInstanceOf(LockLostError);
    if (reason === 'taken') expect(await redis.exists(key(lock.name))).toBe(1);
  });

  it('reports forceUnlock from another client as deleted, and unlock() then touches nothing', async () => {
    const locks = client();
    const other = client();
    const lock = locks.getLock(name());
    await lock.lock();
    const lost = nextEvent<LostEvent>(locks, 'lost', WATCHDOG);
    expect(await other.getLock(lock.name).forceUnlock()).toBe(true);
    expect((await lost).reason).toBe('deleted');
    const holder = other.getLock(lock.name);
    await holder.lock(5_000);
    await expect(lock.unlock()).rejects.toBeInstanceOf(LockLostError);
    expect(await holder.getHoldCount()).toBe(1);
    await holder.unlock();
  });

  it("lets fn's own error win over the loss, with the loss as its cause", async () => {
    const locks = client();
    const lock = locks.getLock(name());
    const failure = new Error('fn failed');
    const running = lock.run(async ({ signal }) => {
      await redis.del(key(lock.name));
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      throw failure;
    });
    await expect(running).rejects.toBe(failure);
    expect(failure.cause).toBeInstanceOf(LockLostError);
  });

  it('reports a killed server as expired by the lease end, not later', async () => {
    const own = await startServer();
    try {
      const conn = await connect(own.port, { maxRetriesPerRequest: 1 });
      const locks = client(conn);
      const lock = locks.getLock(name());
      await lock.lock();
      const lost = nextEvent<LostEvent>(lock, 'lost', WATCHDOG * 2);
      const killedAt = performance.now();
      await own.kill('SIGKILL');
      const event = await lost;
      expect(['expired']).toContain(event.reason);
      expect(performance.now() - killedAt).toBeLessThanOrEqual(WATCHDOG + 50);
    } finally {
      await own.stop();
    }
  });

  it('reports a black-holed connection lost before its lease ends, before anyone else gets in', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
    try {
      const conn = await connect(proxy.port);
      const locks = client(conn);
      const other = client();
      const lock = locks.getLock(name());
      await lock.lock();
      await nextEvent(lock, 'renewed', WATCHDOG);
      const failures: number[] = [];
      lock.on('renewalFailed', (e) => failures.push(e.attempt));
      proxy.blackhole();
      const blackholedAt = performance.now();
      const lost = nextEvent<LostEvent>(lock, 'lost', WATCHDOG * 2);
      // Another client waits for the lock meanwhile; it may only get in after `lost`.
      const otherGotIt = other
        .getLock(lock.name)
        .tryLock(WATCHDOG * 3)
        .then((ok) => ok && performance.now());
      const event = await lost;
      const lostAt = performance.now();
      expect(event.reason).toBe('expired');
      expect(lostAt - blackholedAt).toBeLessThanOrEqual(WATCHDOG + 50);
      // Each stalled attempt is bounded, so trouble is reported before the loss.
      expect(failures.length).toBeGreaterThanOrEqual(1);
      const otherAt = await otherGotIt;
      expect(otherAt).not.toBe(false);
      expect(otherAt as number).toBeGreaterThan(lostAt);
    } finally {
      await proxy.close();
    }
  });

  it('survives a 150 ms connection drop, reporting renewalFailed while it retries', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
    try {
      const conn = await connect(proxy.port, { maxRetriesPerRequest: 0, retryStrategy: () => 20 });
      const locks = client(conn, 1_500);
      const lock = locks.getLock(name());
      const losses: unknown[] = [];
      lock.on('lost', (e) => losses.push(e));
      await lock.lock();
      await nextEvent(lock, 'renewed', 1_500);
      proxy.refuse(true);
      proxy.drop();
      const failed = nextEvent(lock, 'renewalFailed', 1_500);
      await failed;
      await new Promise((r) => setTimeout(r, 150 - 0)); // the outage itself lasts 150 ms
      proxy.refuse(false);
      await nextEvent(lock, 'renewed', 1_500);
      await nextEvent(lock, 'renewed', 1_500);
      expect(losses).toEqual([]);
      expect(await lock.isHeldByCurrentScope()).toBe(true);
      await lock.unlock();
    } finally {
      await proxy.close();
    }
  });
});

describe('processes', () => {
  function run(args: string[]) {
    const root = path.resolve(__dirname, '..', '..');
    return spawn(process.execPath, ['-r', 'tsx/cjs', 'spec/fixtures/holder.ts', ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
  it('frees the lock of a holder killed with SIGKILL within one lease', async () => {
    const lockName = name();
    const child = run([String(server.port), lockName, 'hold']);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    await waitFor(() => out.includes('held'), { timeout: 15_000, message: 'child took the lock' });
    const locks = client();
    child.kill('SIGKILL');
    const killedAt = performance.now();
    expect(await locks.getLock(lockName).tryLock(3_000, 5_000)).toBe(true);
    const delay = performance.now() - killedAt;
    expect(delay).toBeLessThanOrEqual(1_000 + 100);
    await locks.getLock(lockName).forceUnlock();
  });

  it('exits by itself after close(), with pending waits rejected', async () => {
    const lockName = name();
    const child = run([String(server.port), lockName, 'close']);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`child did not exit by itself; output: ${out} ${err}`)), 20_000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('wait rejected: client closed');
    expect(out).toContain('closed');
    // close() stops the watchdog: the held lock expires within its lease.
    await waitFor(async () => (await redis.exists(key(lockName))) === 0, { timeout: 1_500 });
  });
});
