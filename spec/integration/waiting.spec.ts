import { setImmediate } from 'node:timers/promises';
import Redis from 'ioredis';
import { CommandTimeoutError, LockClient, LockTimeoutError, LockUnavailableError, type AcquireFailedEvent, type ClientOptions, type Lock, type Connection } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { TcpProxy } from '../kit/proxy';
import { closeConnection, lockConnection } from '../helpers/clients';
import { nextEvent, waitFor, warmUp } from '../helpers/wait';

// The waiting rules (DESIGN "Waiting, and Redis that does not answer") on one master:
// a wait keeps its budget whatever Redis does, retries failed attempts with backoff and
// reports each one, and ends with its last outcome.

let server: RedisServer;
let admin: Redis;
const clients: LockClient[] = [];
const connections: Connection[] = [];
let n = 0;
const name = () => `wait-${++n}`;
const key = (lockName: string) => `holdfast:{${lockName}}`;

/** The lock's connection, of the kind under test (helpers/clients), reconnecting every 20 ms. */
async function connect(port: number): Promise<Connection> {
  const c = await lockConnection(port, { retryDelay: 20 });
  connections.push(c);
  return c;
}

/** What the clients reported as 'error': nothing here provokes one, closing included. */
const errors: unknown[] = [];

function client(connection: Connection, options?: ClientOptions): LockClient {
  const c = new LockClient(connection, options);
  c.on('error', (e) => errors.push(e));
  clients.push(c);
  return c;
}

/** Collects acquireFailed events of a client. */
function failures(c: LockClient): AcquireFailedEvent[] {
  const seen: AcquireFailedEvent[] = [];
  c.on('acquireFailed', (e) => seen.push(e));
  return seen;
}

/** How long the call takes to settle, and how. */
async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = performance.now();
  try {
    const value = await call();
    return { ms: performance.now() - start, value };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

beforeAll(async () => {
  server = await startServer();
  admin = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 20 });
  admin.on('error', () => undefined);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(connections.splice(0).map(closeConnection));
  // Commands still out when a connection closes are rejected at once: what a client
  // would report of them it has reported once the rejections' handlers ran.
  await setImmediate();
  expect(errors.splice(0)).toEqual([]);
  if (!server.running) await server.restart();
  await admin.client('UNPAUSE').catch(() => undefined);
});
afterAll(async () => {
  admin.disconnect();
  await server.stop();
});

describe('a stopped server', () => {
  it('tryLock() settles within one command bound (1 s by default) with LockUnavailableError', async () => {
    const locks = client(await connect(server.port));
    await locks.getLock(name()).tryLock(); // connected and scripts loaded
    await server.kill();
    const r = await timed(() => locks.getLock(name()).tryLock());
    expect(r.error).toBeInstanceOf(LockUnavailableError);
    expect((r.error as LockUnavailableError).code).toBe('HOLDFAST_UNAVAILABLE');
    expect((r.error as LockUnavailableError).cause).toBeInstanceOf(Error);
    expect(r.ms).toBeLessThan(1_000 + 250);
  });

  it('isLocked(), inspect() and forceUnlock() say that Redis could not be reached, and what they could not do (not "cannot acquire")', async () => {
    const locks = client(await connect(server.port), { commandTimeout: 200 });
    const lock = locks.getLock(name());
    await lock.tryLock(); // connected and scripts loaded
    await lock.unlock();
    await server.kill();
    for (const [call, doing] of [
      [() => lock.isLocked(), 'tell whether'],
      [() => lock.inspect(), 'inspect'],
      [() => lock.forceUnlock(), 'force-unlock'],
    ] as const) {
      const error = await (call as () => Promise<unknown>)().then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(LockUnavailableError);
      expect((error as Error).message).toMatch(new RegExp(`^cannot ${doing} '${lock.name}'.*: Redis could not be reached \\(`));
    }
  });

  it('tryLock(w) and run() with waitTime keep their budget, retry with backoff and report each failure', async () => {
    const locks = client(await connect(server.port), { commandTimeout: 200 });
    const seen = failures(locks);
    await locks.getLock(name()).tryLock();
    await server.kill();
    const lockName = name();
    const r = await timed(() => locks.getLock(lockName).tryLock(1_200));
    expect(r.error).toBeInstanceOf(LockUnavailableError);
    expect(r.ms).toBeGreaterThanOrEqual(1_200);
    expect(r.ms).toBeLessThan(1_200 + 200 + 250);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.map((e) => e.attempt)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.every((e) => e.name === lockName && e.error instanceof Error)).toBe(true);

    let ran = false;
    const run = await timed(() => locks.getLock(name()).run(() => void (ran = true), { waitTime: 500 }));
    expect(run.error).toBeInstanceOf(LockUnavailableError);
    expect(ran).toBe(false);
  });

  it('lock() keeps trying until Redis is back, then holds the lock', async () => {
    const locks = client(await connect(server.port), { commandTimeout: 200 });
    const seen = failures(locks);
    const lock = locks.getLock(name());
    await lock.tryLock(); // loads the scripts
    await lock.unlock();
    await server.kill();
    let done = false;
    const waiting = lock.lock().then(() => void (done = true));
    await waitFor(() => seen.length >= 2, { timeout: 5_000, message: 'two failed attempts' });
    expect(done).toBe(false);
    await server.restart();
    await waitFor(() => done, { timeout: 5_000, message: 'lock() resolved after the restart' });
    await waiting;
    expect(await admin.exists(key(lock.name))).toBe(1);
    await lock.unlock();
    expect(await admin.exists(key(lock.name))).toBe(0);
  });

  it('an aborted wait rejects with the reason and leaves no hold and no subscription', async () => {
    const locks = client(await connect(server.port), { commandTimeout: 200 });
    const seen = failures(locks);
    const lock = locks.getLock(name());
    await lock.tryLock();
    await lock.unlock();
    await server.kill();
    const aborts = new AbortController();
    const waiting = lock.lock({ signal: aborts.signal }).catch((e: unknown) => e);
    await waitFor(() => seen.length >= 1, { timeout: 5_000, message: 'a failed attempt' });
    aborts.abort(new Error('caller gave up'));
    expect(((await waiting) as Error).message).toBe('caller gave up');
    await server.restart();
    await waitFor(async () => ((await admin.pubsub('NUMSUB', `${key(lock.name)}:next`)) as [string, number])[1] === 0, { timeout: 5_000, message: 'no subscription left' });
    // An attempt queued while the server was down may run once it is back: its late
    // grant is given back.
    await waitFor(async () => (await admin.exists(key(lock.name))) === 0, { timeout: 5_000, message: 'no hold left' });
  });
});

describe('a black-holed connection', () => {
  let proxy: TcpProxy;
  beforeEach(async () => {
    proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
  });
  afterEach(async () => {
    await proxy.close();
  });

  // A call settles after its cleanup (DESIGN): the grant an aborted wait's attempt
  // brought is given back before the wait rejects, so the next call finds the lock free.
  it('an aborted wait whose attempt brought a grant rejects only once the grant is given back: another client takes the lock at once, and nothing is left', async () => {
    const locks = client(await connect(proxy.port), { commandTimeout: 2_000 });
    const other = client(await connect(server.port));
    const lockName = name();
    const mine = locks.getLock(lockName);
    expect(await mine.tryLock()).toBe(true); // connected, scripts loaded
    await mine.unlock();
    proxy.delayReplies();
    const aborts = new AbortController();
    const waiting = mine.lock({ signal: aborts.signal });
    await waitFor(async () => (await admin.exists(key(lockName))) === 1, { timeout: 2_000, message: 'granted in Redis, its reply held back' });
    const reason = new Error('caller gave up');
    aborts.abort(reason);
    const delivering = setTimeout(() => proxy.deliverReplies(), 50);
    try {
      await expect(waiting).rejects.toBe(reason);
    } finally {
      clearTimeout(delivering);
      proxy.deliverReplies();
    }
    const theirs = other.getLock(lockName);
    expect(await theirs.tryLock()).toBe(true);
    await theirs.unlock();
    // What a free lock keeps: its fencing counter.
    expect((await admin.keys(`${key(lockName)}*`)).sort()).toEqual([`${key(lockName)}:fence`]);
  });

  it.each([false, true])('tryLock(w) ends within w plus one bound, and late grants are given back (fair: %s)', async (fair) => {
    const locks = client(await connect(proxy.port), { commandTimeout: 200 });
    const seen = failures(locks);
    const get = (lockName: string) => (fair ? locks.getFairLock(lockName) : locks.getLock(lockName));
    await warmUp(() => get(name()).tryLock()); // connected, scripts loaded
    const lockName = name();
    proxy.blackhole();
    const r = await timed(() => get(lockName).tryLock(600));
    expect(r.error).toBeInstanceOf(LockUnavailableError);
    expect(r.ms).toBeGreaterThanOrEqual(600);
    expect(r.ms).toBeLessThan(600 + 200 + 250);
    expect(seen.length).toBeGreaterThanOrEqual(1);
    proxy.resume();
    // Whatever reached the server late was granted to nobody: it is given back.
    await waitFor(async () => (await admin.exists(key(lockName))) === 0, { timeout: 5_000, message: 'no hold left' });
  });

  it.each([false, true])('a first attempt that outlasts the whole wait ends it with LockUnavailableError (fair: %s)', async (fair) => {
    const locks = client(await connect(proxy.port), { commandTimeout: 200 });
    const get = (lockName: string) => (fair ? locks.getFairLock(lockName) : locks.getLock(lockName));
    await warmUp(() => get(name()).tryLock()); // connected, scripts loaded
    proxy.blackhole();
    // The attempt times out after 200 ms, past the 50 ms wait: the wait is over before it queues.
    const r = await timed(() => get(name()).tryLock(50));
    expect(r.error).toBeInstanceOf(LockUnavailableError);
    expect(r.ms).toBeLessThan(200 + 250);
    proxy.resume();
  });
});

describe('a wait across an outage', () => {
  // The holder's lease ends while writes are paused: the waiter's attempt then times
  // out, and the wait goes on instead of rejecting.
  it.each([false, true])('a waiting lock() survives timed-out attempts and gets the lock after (fair: %s)', async (fair) => {
    const connection = await connect(server.port);
    const holder = client(connection);
    const waiter = client(connection, { commandTimeout: 300 });
    const get = (c: LockClient, lockName: string): Lock => (fair ? c.getFairLock(lockName) : c.getLock(lockName));
    const lockName = name();
    const seen = failures(waiter);
    await get(holder, lockName).lock(800);
    let done = false;
    const waiting = get(waiter, lockName).lock().then(() => void (done = true));
    await admin.client('PAUSE', 10_000, 'WRITE');
    await nextEvent(waiter, 'acquireFailed', 5_000);
    expect(done).toBe(false);
    await admin.client('UNPAUSE');
    await waitFor(() => done, { timeout: 5_000, message: 'the waiter holds the lock' });
    await waiting;
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(await get(waiter, lockName).isLocked()).toBe(true);
  });
});

describe('a grant read after its lease ran out', () => {
  // The server holds the acquire back (CLIENT PAUSE) past the lease it then grants, and
  // the command bound is longer than the pause: the reply comes in time for the bound,
  // too late for the lease. Another owner may hold the lock by then; the grant is not used.
  /** tryLock(waitTime, 200) sent while the server is paused for 500 ms, on a client bounding calls at 3 s. */
  async function pausedTryLock(fair: boolean, waitTime: number) {
    const locks = client(await connect(server.port), { commandTimeout: 3_000 });
    const seen = failures(locks);
    const get = (lockName: string) => (fair ? locks.getFairLock(lockName) : locks.getLock(lockName));
    await warmUp(() => get(name()).tryLock()); // connected, scripts loaded
    const lockName = name();
    await admin.client('PAUSE', 500, 'ALL');
    const r = await timed(() => get(lockName).tryLock(waitTime, 200));
    return { r, seen, lockName, lock: get(lockName) };
  }

  it.each([false, true])('tryLock(0, lease) reports the lock unavailable and gives the grant back (fair: %s)', async (fair) => {
    const { r, seen, lockName } = await pausedTryLock(fair, 0);
    expect(r.error).toBeInstanceOf(LockUnavailableError);
    expect((r.error as Error).cause).toBeInstanceOf(CommandTimeoutError);
    expect(seen).toEqual([]); // one attempt: nothing retried
    await waitFor(async () => (await admin.exists(key(lockName))) === 0, { timeout: 2_000, message: 'the late grant given back' });
  });

  it.each([false, true])('a wait reports the late grant, retries and holds a live lease (fair: %s)', async (fair) => {
    const { r, seen, lockName, lock } = await pausedTryLock(fair, 3_000);
    expect(r.value).toBe(true);
    expect(r.ms).toBeGreaterThanOrEqual(400);
    // The first attempt's grant came late; a retry on a loaded host might too, never another failure.
    expect(seen.length).toBeGreaterThanOrEqual(1);
    for (const e of seen) expect(e.error).toBeInstanceOf(CommandTimeoutError);
    // The hold is the retry's: its lease runs from after the pause.
    expect(await admin.pttl(key(lockName))).toBeGreaterThan(0);
    expect(await lock.isLocked()).toBe(true);
  });
});

describe('deadlines', () => {
  it.each([false, true])('tryLock(50) on a held lock never settles before 50 ms (fair: %s)', async (fair) => {
    const locks = client(await connect(server.port));
    const other = client(await connect(server.port));
    const lockName = name();
    const get = (c: LockClient) => (fair ? c.getFairLock(lockName) : c.getLock(lockName));
    await get(other).lock();
    const times: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await timed(() => get(locks).tryLock(50));
      expect(r.value).toBe(false);
      times.push(r.ms);
    }
    expect(Math.min(...times)).toBeGreaterThanOrEqual(50);
  });

  it('run() and acquire() whose wait runs out reject with LockTimeoutError', async () => {
    const locks = client(await connect(server.port));
    const other = client(await connect(server.port));
    const lockName = name();
    await other.getLock(lockName).lock();
    const run = await timed(() => locks.getLock(lockName).run(() => 1, { waitTime: 100 }));
    expect(run.error).toBeInstanceOf(LockTimeoutError);
    expect(run.error).toMatchObject({ code: 'HOLDFAST_WAIT_TIMEOUT', waitTime: 100, lockName });
    const held = await timed(() => locks.getLock(lockName).acquire({ waitTime: 0 }));
    expect(held.error).toBeInstanceOf(LockTimeoutError);
  });
});

describe('a wait whose subscription broke', () => {
  /** The channels this client's waits on lockName are subscribed to, as the server sees them. */
  const subscribed = async (lockName: string): Promise<number> => ((await admin.pubsub('CHANNELS', `${key(lockName)}*`)) as string[]).length;

  // A waiter sleeping on pub/sub while another owner holds the lock under a long lease:
  // its subscriber connection drops with the server, and the wait asks again instead of
  // resting on its last answer ("held by another owner"). The server dies after the
  // waiter's last ask before its deadline: a queued waiter sleeps up to a third of its
  // heartbeat (10 s) after its refusal.
  it.each([false, true])('asks again when its Redis is gone and ends with LockUnavailableError (fair: %s)', async (fair) => {
    const holder = client(await connect(server.port));
    const waiter = client(await connect(server.port));
    const seen = failures(waiter);
    const lockName = name();
    const get = (c: LockClient): Lock => (fair ? c.getFairLock(lockName) : c.getLock(lockName));
    await get(holder).lock(); // watchdog: a 30 s lease, renewed
    const start = performance.now();
    const waiting = timed(() => get(waiter).tryLock(2_000));
    await waitFor(async () => (await subscribed(lockName)) === 2, { timeout: 2_000, message: "the waiter's subscriptions" });
    await waitFor(() => performance.now() - start >= 500, { timeout: 2_000, message: '500 ms into the wait' });
    // Asked when its subscription broke, not only at its deadline (1.5 s on): the ask fails
    // within one command bound (1 s).
    const failed = nextEvent(waiter, 'acquireFailed', 1_400);
    await server.kill();
    await failed;
    const r = await waiting;
    expect(r.error).toBeInstanceOf(LockUnavailableError);
    // The last attempt's error (node's own socket errors are Errors of another realm under jest).
    expect((r.error as Error).cause).toHaveProperty('message');
    expect(seen.length).toBeGreaterThanOrEqual(1);
  });

  // Only the subscriber connection drops; the holder releases before it is back, so the
  // release's message is lost: the wait must not sleep until the holder's TTL or its
  // heartbeat (10 s here) to learn of it.
  it.each([false, true])('asks again once resubscribed when a release came while its subscriber reconnected (fair: %s)', async (fair) => {
    const holder = client(await connect(server.port), { watchdogTimeout: 10_000 });
    // The waiter's connection (and its duplicate, the subscriber) retries every 500 ms.
    const waiterConnection = await lockConnection(server.port, { retryDelay: 500 });
    connections.push(waiterConnection);
    const waiter = client(waiterConnection);
    const lockName = name();
    const get = (c: LockClient): Lock => (fair ? c.getFairLock(lockName) : c.getLock(lockName));
    const lock = get(holder);
    await lock.lock();
    let done = false;
    const waiting = get(waiter).lock().then(() => void (done = true));
    await waitFor(async () => (await subscribed(lockName)) === 2, { timeout: 2_000, message: "the waiter's subscriptions" });
    // The server takes no new connection until the release is out: no subscriber (the
    // waiter's, nor the holder's holder channel) can be back before it (node-redis and
    // GLIDE reconnect at once after a break).
    const connected = Number(/connected_clients:(\d+)/.exec(await admin.info('clients'))?.[1]);
    const subscribers = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('\n').filter((line) => line.trim() !== '').length;
    await admin.config('SET', 'maxclients', String(connected - subscribers));
    let released: number;
    try {
      await admin.client('KILL', 'TYPE', 'pubsub');
      await waitFor(async () => (await subscribed(lockName)) === 0, { timeout: 2_000, message: 'the subscriber gone' });
      await lock.unlock();
      released = performance.now();
    } finally {
      await admin.config('SET', 'maxclients', '10000');
    }
    await waitFor(() => done, { timeout: 12_000, message: 'the waiter holds the lock' });
    await waiting;
    expect(performance.now() - released).toBeLessThan(2_000);
    expect(await waiter.getFairLock(lockName).isLocked()).toBe(true);
  });
});
