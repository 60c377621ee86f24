import Redis from 'ioredis';
import { LockClient, type Held } from '../../lib';
import { startMasters, startServer, type RedisServer } from '../kit/servers';
import { unconnectedClient } from '../helpers/unconnected';
import { waitFor } from '../helpers/wait';

// keyRetention: a lock name that is no longer used leaves nothing in Redis once the
// retention has passed since its last use, and its fencing tokens still strictly
// increase: across the expiry of its counter, an empty restart, and in quorum mode.

const RETENTION = 1_000;
/** Redis expires keys actively ten times a second: a second is plenty once they are due. */
const EXPIRY_SLACK = 5_000;
let n = 0;
const name = () => `ret-${++n}`;
const key = (lockName: string) => `holdfast:{${lockName}}`;
const fence = (lockName: string) => `${key(lockName)}:fence`;

function connect(server: RedisServer): Redis {
  const c = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  c.on('error', () => undefined);
  return c;
}

async function allKeys(c: Redis): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await c.scan(cursor, 'COUNT', 1_000);
    out.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return out;
}

/** PTTL of every key in the database, by key. */
async function ttls(c: Redis): Promise<Map<string, number>> {
  const keys = await allKeys(c);
  const replies = await Promise.all(keys.map((k) => c.pttl(k)));
  return new Map(keys.map((k, i) => [k, replies[i]]));
}

function expectIncreasing(tokens: number[]): void {
  for (const t of tokens) expect(Number.isSafeInteger(t)).toBe(true);
  for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
}

describe('option checks', () => {
  const current = unconnectedClient();
  it.each([
    [{ keyRetention: '1h' }, TypeError, /options.keyRetention must be a finite number of milliseconds, got '1h'/],
    [{ keyRetention: Number.NaN }, TypeError, /options.keyRetention must be a finite number/],
    [{ keyRetention: 999 }, RangeError, /options.keyRetention must be at least 1000 ms, got 999/],
    [{ keyRetention: 2 ** 31 }, RangeError, /options.keyRetention must be at most/],
  ])('rejects %p before anything is sent', (options, type, message) => {
    const { redis } = current();
    expect(() => new LockClient(redis, options as never)).toThrow(type);
    expect(() => new LockClient(redis, options as never)).toThrow(message);
  });
});

describe('one master', () => {
  let server: RedisServer;
  let redis: Redis;
  const clients: LockClient[] = [];
  const client = (options?: ConstructorParameters<typeof LockClient>[1]) => {
    const c = new LockClient(redis, options);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    server = await startServer();
    redis = connect(server);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  it('leaves nothing in Redis once keyRetention has passed, whatever the names went through', async () => {
    await redis.flushall();
    // Longer than the others: the scan below must find the first names' counters still
    // there on a loaded machine.
    const retention = 3 * RETENTION;
    const locks = client({ keyRetention: retention, watchdogTimeout: 1_000 });
    const other = client({ keyRetention: retention, watchdogTimeout: 1_000 });
    // The README's pattern: one name per order.
    await Promise.all(Array.from({ length: 500 }, (_, i) => locks.getLock(`order:${i}`).run(async () => undefined)));
    // Reentry, a lease, a hand-off to a local waiter, a forceUnlock.
    const nested = locks.getLock(name());
    await nested.run(() => nested.run(async () => undefined));
    await locks.getLock(name()).tryLock(0, 500);
    const shared = locks.getLock(name());
    await Promise.all([shared.run(async () => undefined), shared.run(async () => undefined)]);
    const forced = locks.getLock(name());
    await forced.lock();
    await forced.forceUnlock();
    // A fair lock with a waiter in its queue while the scan below runs.
    const fairName = name();
    const fair = locks.getFairLock(fairName);
    await fair.lock();
    const next = other.getFairLock(fairName);
    const waiting = next.tryLock(10_000);
    await waitFor(async () => (await fair.inspect()).waiters === 1, { timeout: 2_000, message: 'a fair waiter queued' });

    // Every key holdfast wrote has a TTL: a lease (the lock), two heartbeats (the fair
    // queue), the retention (every fencing counter).
    const seen = await ttls(redis);
    expect(seen.size).toBeGreaterThan(500);
    for (const [k, pttl] of seen) {
      expect([k, pttl > 0]).toEqual([k, true]);
      if (k.endsWith(':fence')) expect([k, pttl <= retention]).toEqual([k, true]);
    }
    expect([...seen.keys()].filter((k) => k.includes(fairName)).sort()).toEqual([key(fairName), `${key(fairName)}:deadlines`, fence(fairName), `${key(fairName)}:queue`, `${key(fairName)}:tickets`]);

    await fair.unlock();
    expect(await waiting).toBe(true);
    await next.unlock();
    await waitFor(async () => (await redis.dbsize()) === 0, { timeout: retention + EXPIRY_SLACK, interval: 100, message: 'an empty database' });
  });

  it('strictly increases tokens across the expiry of the fencing counter', async () => {
    const locks = client({ keyRetention: RETENTION });
    const lockName = name();
    const tokens: number[] = [];
    const take = async () => {
      const held = await locks.getLock(lockName).acquire();
      tokens.push(held.token);
      await held.release();
    };
    for (let i = 0; i < 3; i++) await take();
    expect(await redis.pttl(fence(lockName))).toBeGreaterThan(0);
    expect(await redis.pttl(fence(lockName))).toBeLessThanOrEqual(RETENTION);
    await waitFor(async () => (await redis.exists(fence(lockName))) === 0, { timeout: RETENTION + EXPIRY_SLACK, message: 'the counter expired' });
    for (let i = 0; i < 2; i++) await take();
    expectIncreasing(tokens);

    // The fair lock mints the same way.
    const fairName = name();
    const fairTokens: number[] = [];
    for (let round = 0; round < 2; round++) {
      const held = await locks.getFairLock(fairName).acquire();
      fairTokens.push(held.token);
      await held.release();
      await waitFor(async () => (await redis.exists(fence(fairName))) === 0, { timeout: RETENTION + EXPIRY_SLACK, message: 'the fair counter expired' });
    }
    expectIncreasing(fairTokens);
  });

  it('strictly increases tokens after a hold that outlived its counter', async () => {
    const locks = client({ keyRetention: RETENTION, watchdogTimeout: 600 });
    const lockName = name();
    const held = await locks.getLock(lockName).acquire();
    // The watchdog keeps the lock; its counter expires meanwhile.
    await waitFor(async () => (await redis.exists(fence(lockName))) === 0, { timeout: RETENTION + EXPIRY_SLACK, message: 'the counter expired under the hold' });
    expect(await redis.exists(key(lockName))).toBe(1);
    await held.release();
    const next = await locks.getLock(lockName).acquire();
    expect(next.token).toBeGreaterThan(held.token);
    await next.release();
  });

  it('strictly increases tokens after a failover set the counter back, whichever script mints', async () => {
    // A promoted replica that lacked the last increments (or a forced failover's old
    // master that went on minting) holds the counter below tokens already handed out.
    const locks = client();
    const other = client();
    const setBack = async (lockName: string) => {
      const fences = await redis.keys(`*{${lockName}}*:fence`);
      expect(fences).toHaveLength(1);
      await redis.set(fences[0], '1', 'PX', 60_000);
    };
    const afterSetBack = async (lockName: string, take: () => Promise<Held>) => {
      const first = await take();
      await first.release();
      await setBack(lockName);
      const next = await take();
      await next.release();
      expect(next.token).toBeGreaterThan(first.token);
    };
    const lockName = name();
    await afterSetBack(lockName, () => locks.getLock(lockName).acquire());
    const fairName = name();
    await afterSetBack(fairName, () => locks.getFairLock(fairName).acquire());
    const rwName = name();
    await afterSetBack(rwName, () => locks.getReadWriteLock(rwName).writeLock().acquire());
    const multiName = name();
    const multi = locks.getMultiLock([multiName, name()]);
    const before = await multi.acquire();
    await before.release();
    await setBack(multiName);
    const after = await multi.acquire();
    await after.release();
    expect(after.tokens[multiName]).toBeGreaterThan(before.tokens[multiName]!);

    // A release's grant to the queue's head mints too (the lock's and the write side's).
    for (const [granted, take] of [
      [name(), (c: LockClient, n: string) => c.getLock(n)],
      [name(), (c: LockClient, n: string) => c.getReadWriteLock(n).writeLock()],
    ] as const) {
      const holding = await take(locks, granted).acquire();
      const waiting = take(other, granted).acquire({ waitTime: 10_000 });
      await waitFor(async () => (await redis.exists(`${key(granted)}:queue`)) === 1, { timeout: 5_000, message: 'a waiter queued' });
      await setBack(granted);
      await holding.release();
      const next = await waiting;
      await next.release();
      expect(next.token).toBeGreaterThan(holding.token);
    }
  });

  it('strictly increases tokens across an empty restart of the server (default retention)', async () => {
    const locks = client();
    const lockName = name();
    const tokens: number[] = [];
    const take = async () => {
      const held: Held = await waitFor(() => locks.getLock(lockName).acquire({ waitTime: 1_000 }), { timeout: 10_000, message: 'an acquisition' });
      tokens.push(held.token);
      await held.release();
    };
    for (let i = 0; i < 3; i++) await take();
    // The default retention: 24 h.
    expect(await redis.pttl(fence(lockName))).toBeGreaterThan(86_000_000);
    expect(await redis.pttl(fence(lockName))).toBeLessThanOrEqual(86_400_000);
    await server.restart(); // empty: the counter is gone
    await waitFor(() => redis.status === 'ready', { timeout: 5_000, message: 'reconnected' });
    expect(await redis.exists(fence(lockName))).toBe(0);
    for (let i = 0; i < 2; i++) await take();
    expectIncreasing(tokens);
  });
});

describe('quorum mode (3 masters)', () => {
  let masters: RedisServer[];
  let conns: Redis[];
  const clients: LockClient[] = [];
  const client = () => {
    const c = new LockClient(conns, { keyRetention: RETENTION, watchdogTimeout: 600 });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    masters = await startMasters(3);
    conns = masters.map(connect);
    // Masters younger than a lease sit out (delayed restart); uptime comes in whole seconds.
    await waitFor(async () => (await Promise.all(conns.map((c) => c.info('server')))).every((i) => Number(/uptime_in_seconds:(\d+)/.exec(i)?.[1]) >= 2), {
      timeout: 5_000,
      message: 'masters up for more than a second',
    });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    for (const c of conns) c.disconnect();
    await Promise.all(masters.map((m) => m.stop()));
  });

  it('strictly increases tokens across the expiry, and leaves nothing behind', async () => {
    const locks = client();
    const lockName = name();
    const tokens: number[] = [];
    const take = async () => {
      const held = await locks.getLock(lockName).acquire({ waitTime: 5_000 });
      tokens.push(held.token);
      await held.release();
    };
    for (let i = 0; i < 3; i++) await take();
    for (const c of conns) expect(await c.pttl(fence(lockName))).toBeGreaterThan(0);
    await waitFor(async () => (await Promise.all(conns.map((c) => c.dbsize()))).every((size) => size === 0), {
      timeout: RETENTION + EXPIRY_SLACK,
      interval: 100,
      message: 'every master empty',
    });
    for (let i = 0; i < 2; i++) await take();
    expectIncreasing(tokens);
  });

  it('gives a raised fence floor the retention as TTL', async () => {
    const locks = client();
    const lockName = name();
    // Masters 0 and 1 are ahead (a minute, as by an earlier owner), master 2 has no counter:
    // the grant's token comes from 0 and 1, and master 2 is raised to it.
    const ahead = Date.now() * 1_000 + 60_000_000;
    await conns[0].set(fence(lockName), ahead);
    await conns[1].set(fence(lockName), ahead);
    const held = await locks.getLock(lockName).acquire({ waitTime: 5_000 });
    expect(held.token).toBe(ahead + 1);
    // A majority of one token decides at once; master 2's answer, below it, is raised after.
    await waitFor(async () => Number(await conns[2].get(fence(lockName))) === ahead + 1, { timeout: 2_000, message: 'master 2 raised' });
    for (const c of conns) {
      const pttl = await c.pttl(fence(lockName));
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(RETENTION);
    }
    await held.release();
  });
});
