import RedisMock from 'ioredis-mock';
import { LockClient, LockError, type LostEvent } from '../lib';
import { IoredisMockClient } from '../lib/store/client/ioredis-mock';
import { nextEvent, waitFor, withTimeout } from './helpers/wait';

// holdfast on ioredis-mock, as users run it in their unit tests: no redis-server, the
// same scripts (the mock runs Lua through fengari), pub/sub between the mock's
// instances. Mocks with the same host and port share one in-memory server, so each
// test takes its own port: two LockClients on it are two processes on one Redis.

/** A wait woken by a release settles well within this; the default lease (30 s) is the wait's only other way out. */
const WOKEN = 2_000;

let port = 40_000;
const mocks: InstanceType<typeof RedisMock>[] = [];
const clients: LockClient[] = [];

/** A fresh mock server: returns a function that connects one more LockClient to it. */
function server(options: ConstructorParameters<typeof LockClient>[1] = {}): () => LockClient {
  const p = ++port;
  return () => {
    const redis = new RedisMock({ port: p });
    mocks.push(redis);
    const locks = new LockClient(redis, options);
    clients.push(locks);
    return locks;
  };
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const m of mocks.splice(0)) m.disconnect();
});

/** Resolves with how long `p` took; rejects when it took more than WOKEN. */
async function timed(p: Promise<unknown>, what: string): Promise<number> {
  const start = performance.now();
  await withTimeout(p, WOKEN, what);
  return performance.now() - start;
}

describe('holdfast on ioredis-mock', () => {
  it('accepts the mock as an ioredis connection', () => {
    expect(() => new LockClient(new RedisMock({ port: ++port }))).not.toThrow();
  });

  it("the README's lines (examples/unit-tests.ts) give a LockClient that takes and releases a lock", async () => {
    const { locks } = await import('../examples/unit-tests');
    clients.push(locks);
    const lock = locks.getLock('readme');
    expect(await lock.tryLock()).toBe(true);
    expect(await lock.isLocked()).toBe(true);
    await lock.unlock();
    expect(await lock.isLocked()).toBe(false);
  });

  it('lock: reentry within a scope, exclusion between scopes and between clients, a wait woken by the release', async () => {
    const connect = server();
    const a = connect();
    const b = connect();
    const lock = a.getLock('job');
    let waiting: Promise<void> | undefined;
    await a.scope(async () => {
      await lock.lock();
      await lock.lock();
      expect(await lock.getHoldCount()).toBe(2);
      expect(await a.scope(() => lock.tryLock())).toBe(false);
      expect(await b.getLock('job').tryLock()).toBe(false);
      waiting = b.scope(() => b.getLock('job').lock());
      await lock.unlock();
      expect(await lock.isLocked()).toBe(true);
      await lock.unlock();
    });
    await timed(waiting!, "b's wait");
    expect(await a.getLock('job').tryLock()).toBe(false);
  });

  it('fair lock: waiters on two clients are granted in the order they asked', async () => {
    const connect = server();
    const [a, b, c] = [connect(), connect(), connect()];
    const [fa, fb, fc] = [a, b, c].map((l) => l.getFairLock('printer'));
    const order: string[] = [];
    await fa.lock();
    const first = fb.lock().then(() => order.push('b'));
    await waitFor(async () => (await fa.inspect()).waiters === 1, { message: 'b queued' });
    const second = fc.lock().then(() => order.push('c'));
    await waitFor(async () => (await fa.inspect()).waiters === 2, { message: 'c queued' });
    await fa.unlock();
    await timed(first, "b's wait");
    await fb.unlock();
    await timed(second, "c's wait");
    expect(order).toEqual(['b', 'c']);
    await fc.unlock();
  });

  it('read-write lock: readers share, a writer waits for the last reader and is woken by its release', async () => {
    const connect = server();
    const [a, b] = [connect(), connect()];
    const [ra, rb] = [a, b].map((l) => l.getReadWriteLock('doc').readLock());
    const wa = a.getReadWriteLock('doc').writeLock();
    await ra.lock();
    await rb.lock();
    expect(await a.scope(() => wa.tryLock())).toBe(false);
    const writing = a.scope(() => wa.lock());
    await ra.unlock();
    await rb.unlock();
    await timed(writing, "the writer's wait");
    expect(await rb.tryLock()).toBe(false);
  });

  it('semaphore: at most `limit` permits across clients, a wait woken by a release', async () => {
    const connect = server();
    const [a, b] = [connect(), connect()];
    const [sa, sb] = [a, b].map((l) => l.getSemaphore('quota', 2));
    const one = await sa.acquire();
    const two = await sb.acquire();
    expect(await sa.tryAcquire()).toBeNull();
    expect(await sb.availablePermits()).toBe(0);
    const third = sa.acquire();
    await one.release();
    await timed(third, 'the third permit');
    await two.release();
    await (await third).release();
    expect(await sa.availablePermits()).toBe(2);
  });

  it('multi-lock: every name held, excluding another client from each, a wait woken by the release', async () => {
    const connect = server();
    const [a, b] = [connect(), connect()];
    const both = a.getMultiLock(['account:1', 'account:2']);
    await both.lock();
    expect(await b.getLock('account:2').tryLock()).toBe(false);
    const waiting = b.getMultiLock(['account:2', 'account:1']).lock();
    await both.unlock();
    await timed(waiting, "b's multi-lock");
    expect(await a.getLock('account:1').tryLock()).toBe(false);
  });

  it('a lease ends the hold (lost, expired) and frees the lock for another client', async () => {
    const connect = server();
    const [a, b] = [connect(), connect()];
    const lock = a.getLock('leased');
    const other = b.getLock('leased');
    const lost = nextEvent<LostEvent>(lock, 'lost', 2_000);
    await lock.lock(200);
    expect(await other.tryLock()).toBe(false);
    expect((await lost).reason).toBe('expired');
    // The client counts its lease as over a little before the server lets the key go.
    await waitFor(() => other.tryLock(), { timeout: 1_000, message: 'the other client takes it' });
  });

  it('the watchdog keeps holds past several leases, with real timers (a tick renews both in one script call)', async () => {
    // A 1 s lease, not less: the mock's keys expire by the clock while its Lua (fengari)
    // and the renewal timer share this process, so a stall of a few hundred ms on a busy
    // machine must not outlast a lease.
    const connect = server({ watchdogTimeout: 1_000 });
    const [a, b] = [connect(), connect()];
    const locks = [a.getLock('long:1'), a.getLock('long:2')];
    const others = [b.getLock('long:1'), b.getLock('long:2')];
    const renewed = new Map<string, number>();
    a.on('renewed', ({ name }) => renewed.set(name, (renewed.get(name) ?? 0) + 1));
    for (const lock of locks) await lock.lock();
    await waitFor(() => (renewed.get('long:1') ?? 0) >= 4 && (renewed.get('long:2') ?? 0) >= 4, { timeout: 6_000, message: 'four renewals of each' });
    for (const other of others) expect(await other.tryLock()).toBe(false);
    expect(await locks[0]!.remainTimeToLive()).toBeGreaterThan(0);
    for (const lock of locks) await lock.unlock();
    for (const other of others) expect(await other.tryLock()).toBe(true);
  });

  it('await using releases what acquire() took', async () => {
    const connect = server();
    const [a, b] = [connect(), connect()];
    const lock = a.getLock('scoped');
    {
      await using held = await lock.acquire();
      expect(held.token).toBeGreaterThan(0);
      expect(await b.getLock('scoped').tryLock()).toBe(false);
    }
    expect(await lock.isLocked()).toBe(false);
  });

  it("the scripts' clock (TIME) is the clock the mock expires keys by, and a script's ARGV is the call's", async () => {
    // A queue's deadlines, a semaphore's permits and the read holds are dated by the
    // scripts' clock, the lock hash's lease by the mock's expiry (Date.now()): the two
    // must agree, or a permit ends up to a second before (or after) its lease. Sampled
    // over 1.2 s: the mock's own TIME jumps by a second twice within any second.
    const mock = new RedisMock({ port: ++port });
    mocks.push(mock);
    const scripts = new IoredisMockClient(mock as never);
    const apart: number[] = [];
    for (let i = 0; i < 40; i++) {
      const before = Date.now();
      const [s, us] = (await scripts.eval("return redis.call('time')", [], [])) as [string, string];
      const after = Date.now();
      const at = Number(s) * 1000 + Number(us) / 1000;
      if (at < before || at > after) apart.push(at < before ? at - before : at - after);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    expect(apart).toEqual([]);
    expect(await scripts.eval("return redis.pcall('TIME')[1] .. ' ' .. #ARGV .. ' ' .. ARGV[1] .. ARGV[2]", ['k'], ['a', 7])).toMatch(/^\d+ 2 a7$/);
  });

  it('syncReplicas: the mock has no WAIT, so a wait ends at once with a LockError naming it, nothing left held', async () => {
    const connect = server({ syncReplicas: { min: 1, timeout: 50 } });
    const [a, b] = [connect(), connect()];
    const error = await withTimeout(a.getLock('replicated').lock().catch((e: unknown) => e), WOKEN, 'lock() on the mock with syncReplicas');
    expect(error).toBeInstanceOf(LockError);
    expect((error as Error).message).toMatch(/\bWAIT\b/);
    expect(await b.getLock('replicated').isLocked()).toBe(false);
  });
});
