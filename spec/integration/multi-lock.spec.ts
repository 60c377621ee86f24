import Redis from 'ioredis';
import { LockClient, LockError, LockLostError, LockNotHeldError, LockTimeoutError, type AcquiredEvent, type LostEvent } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { transfer, type Accounts } from '../../examples/multi-lock';
import { contend } from '../helpers/contention';
import { nextEvent, waitFor, withTimeout } from '../helpers/wait';

// getMultiLock over one master: all or nothing, ordered acquisition (no deadlock),
// one wait budget, reentry, tokens per name, loss of one name, bad input.

const WATCHDOG = 600;
let server: RedisServer;
let redis: Redis;
const clients: LockClient[] = [];
let n = 0;
const name = () => `m-${++n}`;
const key = (lockName: string) => `holdfast:{${lockName}}`;
const present = async (...names: string[]) => Promise.all(names.map((x) => redis.exists(key(x))));

function client(): LockClient {
  const c = new LockClient(redis, { watchdogTimeout: WATCHDOG });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

describe('all or nothing', () => {
  it('takes nothing when one name is held elsewhere, and leaves nothing behind', async () => {
    const [a, b, c] = [name(), name(), name()];
    const other = client().getLock(b);
    await other.lock();
    const multi = client().getMultiLock([c, b, a]);
    expect(await multi.tryLock()).toBe(false);
    expect(await present(a, c)).toEqual([0, 0]);
    expect(await multi.isLocked()).toBe(false);
    await other.unlock();
    expect(await multi.tryLock()).toBe(true);
    expect(await present(a, b, c)).toEqual([1, 1, 1]);
    expect(await multi.isLocked()).toBe(true);
    await multi.unlock();
    expect(await present(a, b, c)).toEqual([0, 0, 0]);
  });

  it('run passes a token per name, the ones the names were granted', async () => {
    const [a, b] = [name(), name()];
    const locks = client();
    const granted: AcquiredEvent[] = [];
    locks.on('acquired', (e) => granted.push(e));
    const tokens = await locks.getMultiLock([b, a]).run(({ tokens, names }) => {
      expect(names).toEqual([b, a]);
      return tokens;
    });
    expect(Object.keys(tokens).sort()).toEqual([a, b]);
    expect(granted.map((e) => [e.name, e.token, e.kind])).toEqual([
      [a, tokens[a], 'multi'],
      [b, tokens[b], 'multi'],
    ]); // taken in sorted order, whatever order they were given in
    expect(await present(a, b)).toEqual([0, 0]);
  });

  it('acquire() hands out a Held over every name, released by await using', async () => {
    const [a, b] = [name(), name()];
    const locks = client();
    const multi = locks.getMultiLock([a, b]);
    {
      await using held = await multi.acquire({ waitTime: 1_000 });
      expect(Object.keys(held.tokens).sort()).toEqual([a, b]);
      expect(await present(a, b)).toEqual([1, 1]);
      expect(await held.run(() => multi.getHoldCount())).toBe(1);
      // The held's owner reenters a single name of it.
      await held.run(() => locks.getLock(a).run(async () => undefined, { waitTime: 0 }));
    }
    expect(await present(a, b)).toEqual([0, 0]);
  });
});

describe('waiting', () => {
  it('keeps one budget for all names and gives back what it took at the end', async () => {
    const [a, b] = [name(), name()];
    const other = client();
    const [heldA, heldB] = [other.getLock(a), other.getLock(b)];
    await heldB.lock(20_000);
    await heldA.lock(20_000);
    // a comes free 250 ms in; b never: the wait ends at 500 ms, not 250 + 500.
    const freeA = setTimeout(() => void heldA.unlock(), 250);
    const start = performance.now();
    const error = await client()
      .getMultiLock([b, a])
      .run(async () => undefined, { waitTime: 500 })
      .catch((e: unknown) => e);
    const elapsed = performance.now() - start;
    clearTimeout(freeA);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as LockTimeoutError).lockName).toBe(b);
    expect(elapsed).toBeGreaterThanOrEqual(495);
    expect(elapsed).toBeLessThan(500 + 600);
    await waitFor(async () => (await present(a))[0] === 0, { message: 'a given back' });
  });

  it('waits for every name in turn and gets them all once they are free', async () => {
    const [a, b] = [name(), name()];
    const other = client();
    const [heldA, heldB] = [other.getLock(a), other.getLock(b)];
    await heldA.lock(20_000);
    await heldB.lock(20_000);
    const pending = client().getMultiLock([a, b]).tryLock(5_000);
    await heldB.unlock();
    await heldA.unlock();
    expect(await pending).toBe(true);
  });

  it('an abort while waiting for a later name gives back the earlier ones', async () => {
    const [a, b] = [name(), name()];
    await client().getLock(b).lock(20_000);
    const locks = client();
    const controller = new AbortController();
    const acquired = nextEvent<AcquiredEvent>(locks.getLock(a), 'acquired', 2_000);
    const pending = locks.getMultiLock([a, b]).lock({ signal: controller.signal });
    await acquired; // a is held, b awaited
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect(await present(a)).toEqual([0]);
  });

  it('a client closing while it waits for a later name gives back the earlier ones', async () => {
    const [a, b] = [name(), name()];
    await client().getLock(b).lock(20_000);
    const locks = client();
    const acquired = nextEvent<AcquiredEvent>(locks.getLock(a), 'acquired', 2_000);
    const pending = locks.getMultiLock([a, b]).lock();
    await acquired;
    await locks.close();
    await expect(pending).rejects.toBeInstanceOf(LockError);
    expect(await present(a)).toEqual([0]);
  });
});

describe('no deadlock', () => {
  it('multi-locks over overlapping names in opposite orders, from two clients, never deadlock or overlap', async () => {
    const [x, y, z] = [name(), name(), name()];
    const sets = [[x, y], [y, x], [y, z], [z, x], [x, y, z], [z, y]]; // every two share a name
    const pool = [client(), client()];
    const result = await withTimeout(
      contend(6, 5, (task, body) => pool[task % 2].getMultiLock(sets[task]).run(body)),
      20_000,
      'overlapping multi-locks',
    );
    expect(result).toEqual({ maxInside: 1, sections: 30 });
    expect(await present(x, y, z)).toEqual([0, 0, 0]);
  });
});

describe('reentry and ownership', () => {
  it('reenters in a scope, also across a multi-lock and a single name', async () => {
    const [a, b] = [name(), name()];
    const locks = client();
    const multi = locks.getMultiLock([a, b]);
    await multi.run(async () => {
      await multi.run(async () => {
        expect(await multi.getHoldCount()).toBe(2);
        await locks.getLock(b).run(async () => expect(await locks.getLock(b).getHoldCount()).toBe(3), { waitTime: 0 });
      }, { waitTime: 0 });
      expect(await multi.getHoldCount()).toBe(1);
    });
    expect(await present(a, b)).toEqual([0, 0]);
    // A scope holding one of the names takes the rest as the same owner.
    await locks.getLock(a).run(async () => {
      await multi.run(async () => expect(await multi.isHeldByCurrentScope()).toBe(true), { waitTime: 0 });
      expect(await present(a, b)).toEqual([1, 0]);
    });
  });

  it('unlock() releases every name or none', async () => {
    const [a, b] = [name(), name()];
    const locks = client();
    const multi = locks.getMultiLock([a, b]);
    await expect(multi.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    await locks.scope(async () => {
      await locks.getLock(a).lock();
      await expect(multi.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
      expect(await present(a)).toEqual([1]); // the scope's hold of a is untouched
      await locks.getLock(a).unlock();
    });
    await multi.lock(); // outside every scope: its own owner
    expect(await multi.getHoldCount()).toBe(1);
    await multi.unlock();
    expect(await present(a, b)).toEqual([0, 0]);
  });
});

describe('loss', () => {
  it("aborts run()'s signal when one name is lost, and releases the others", async () => {
    const [a, b] = [name(), name()];
    const locks = client();
    const lost = nextEvent<LostEvent>(locks, 'lost', 3_000);
    const outcome = locks
      .getMultiLock([a, b])
      .run(({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))))
      .catch((e: unknown) => e);
    await waitFor(async () => (await present(b))[0] === 1, { message: 'b held' });
    await redis.del(key(b));
    expect(await lost).toMatchObject({ name: b, kind: 'multi', reason: 'deleted' });
    const error = await withTimeout(outcome, 3_000, 'run() after the loss');
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).lockName).toBe(b);
    expect(await present(a, b)).toEqual([0, 0]);
  });

  it("aborts run()'s signal when the release is what finds a name lost, as a Lock's would", async () => {
    const [a, b] = [name(), name()];
    const locks = client();
    let seen: AbortSignal | undefined;
    const outcome = locks
      .getMultiLock([a, b])
      .run(async ({ signal }) => {
        seen = signal;
        // The name goes before any renewal could notice: only the release finds it gone.
        await redis.del(key(a));
      })
      .catch((e: unknown) => e);
    const error = await withTimeout(outcome, 3_000, 'run() after the loss');
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).lockName).toBe(a);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(error);
    expect(await present(a, b)).toEqual([0, 0]);
  });
});

describe('leases of a wait', () => {
  it('a name taken early outlives its fixed lease while a later one is awaited: the wait ends held', async () => {
    const [a, b] = [name(), name()];
    const heldB = client().getLock(b);
    await heldB.lock(20_000);
    const locks = client();
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    const acquired = nextEvent<AcquiredEvent>(locks.getLock(a), 'acquired', 2_000);
    let ran = false;
    const outcome = locks
      .getMultiLock([a, b])
      .run(async () => {
        ran = true;
        return 'done';
      }, { waitTime: 8_000, leaseTime: 300 })
      .catch((e: unknown) => e);
    await acquired;
    // b comes free 700 ms after a was taken: more than twice a's 300 ms lease.
    const freeB = setTimeout(() => void heldB.unlock(), 700);
    const result = await withTimeout(outcome, 5_000, 'run() waiting for b');
    clearTimeout(freeB);
    expect(result).toBe('done');
    expect(ran).toBe(true);
    expect(lost).toEqual([]);
    expect(await present(a, b)).toEqual([0, 0]);
  });

  it('every name gets the full lease once the last is held, and the client deadline agrees with Redis', async () => {
    const LEASE = 1_000;
    const [a, b] = [name(), name()];
    const heldB = client().getLock(b);
    await heldB.lock(20_000);
    const locks = client();
    const acquired = nextEvent<AcquiredEvent>(locks.getLock(a), 'acquired', 2_000);
    const pending = locks.getMultiLock([a, b]).acquire({ waitTime: 8_000, leaseTime: LEASE });
    await acquired;
    // b comes free 900 ms after a was taken: 9/10 of a's lease already gone.
    const freeB = setTimeout(() => void heldB.unlock(), 900);
    const held = await withTimeout(pending, 5_000, 'acquire() waiting for b');
    clearTimeout(freeB);
    const asked = performance.now();
    const [ttlA, ttlB] = await Promise.all([redis.pttl(key(a)), redis.pttl(key(b))]);
    expect(ttlA).toBeGreaterThan(0.8 * LEASE);
    expect(ttlB).toBeGreaterThan(0.8 * LEASE);
    // The client gives the names up before Redis does (the key expires no earlier than
    // `asked + ttl`), and not long before: its deadline counts from the re-lease too.
    const lostAt = new Map<string, number>();
    locks.on('lost', (e) => lostAt.set(e.name, performance.now()));
    await waitFor(() => lostAt.size === 2, { timeout: 3_000, message: 'both names lost at their deadlines' });
    expect(lostAt.get(a)! - asked).toBeLessThanOrEqual(ttlA);
    expect(lostAt.get(b)! - asked).toBeLessThanOrEqual(ttlB);
    expect(lostAt.get(a)! - asked).toBeGreaterThan(0.8 * LEASE);
    expect(lostAt.get(b)! - asked).toBeGreaterThan(0.8 * LEASE);
    expect(held.signal.aborted).toBe(true);
    await expect(held.release()).rejects.toBeInstanceOf(LockLostError);
  });

  it('tryLock whose budget runs out while a later name is busy answers false and leaves nothing', async () => {
    const [a, b] = [name(), name()];
    const heldB = client().getLock(b);
    await heldB.lock(20_000);
    const locks = client();
    const outcome = locks.getMultiLock([a, b]).tryLock(1_000, 300).catch((e: unknown) => e);
    expect(await withTimeout(outcome, 3_000, 'tryLock')).toBe(false);
    expect(await present(a)).toEqual([0]);
    await heldB.unlock();
  });

  it('a name lost while a later one is awaited is given back and taken again: the wait goes on', async () => {
    const [a, b] = [name(), name()];
    const heldB = client().getLock(b);
    await heldB.lock(20_000);
    const locks = client();
    const acquired = nextEvent<AcquiredEvent>(locks.getLock(a), 'acquired', 2_000);
    const outcome = locks.getMultiLock([a, b]).tryLock(10_000).catch((e: unknown) => e);
    const first = await acquired;
    const lost = nextEvent<LostEvent>(locks.getLock(a), 'lost', 3_000);
    const again = nextEvent<AcquiredEvent>(locks.getLock(a), 'acquired', 3_000);
    await redis.del(key(a));
    expect(await lost).toMatchObject({ name: a, reason: 'deleted' });
    expect((await again).token).toBeGreaterThan(first.token); // a is held again, b still awaited
    await heldB.unlock();
    expect(await withTimeout(outcome, 3_000, 'tryLock after b came free')).toBe(true);
    expect(await present(a, b)).toEqual([1, 1]);
    await locks.getMultiLock([a, b]).forceUnlock();
  });
});

describe('queries', () => {
  it('inspects per name, force-unlocks every name, and reports the first TTL to end', async () => {
    const [a, b] = [name(), name()];
    const multi = client().getMultiLock([b, a]);
    expect(await multi.remainTimeToLive()).toBe(-2);
    await multi.lock(5_000);
    const ttl = await multi.remainTimeToLive();
    expect(ttl).toBeGreaterThan(4_000);
    expect(ttl).toBeLessThanOrEqual(5_000);
    const info = await multi.inspect();
    expect(info.map((i) => [i.name, i.locked, i.holders.length])).toEqual([
      [b, true, 1],
      [a, true, 1],
    ]);
    expect(await multi.forceUnlock()).toBe(true);
    expect(await multi.forceUnlock()).toBe(false);
    expect(await present(a, b)).toEqual([0, 0]);
  });
});

describe('bad input', () => {
  it('is refused before anything is sent', () => {
    const locks = client();
    const bad = (names: unknown) => () => locks.getMultiLock(names as string[]);
    expect(bad('a')).toThrow(TypeError);
    expect(bad(undefined)).toThrow(/names must be an array/);
    expect(bad([])).toThrow(RangeError);
    expect(bad(['a', 'b', 'a'])).toThrow(/names\[2\] repeats 'a'/);
    expect(bad(['a', 7])).toThrow(TypeError);
    expect(bad(['a', 7])).toThrow(/names\[1\]/);
    expect(bad(['a', ''])).toThrow(RangeError);
    expect(bad(['x'.repeat(1025)])).toThrow(RangeError);
  });

  it('checks run() and option arguments, and rejects once the client is closed', async () => {
    const locks = client();
    const multi = locks.getMultiLock([name(), name()]);
    await expect(multi.run(undefined as never)).rejects.toBeInstanceOf(TypeError);
    await expect(multi.tryLock(-1)).rejects.toBeInstanceOf(RangeError);
    await locks.close();
    expect(() => locks.getMultiLock(['a'])).toThrow(LockError);
    await expect(multi.lock()).rejects.toBeInstanceOf(LockError);
  });
});

describe('the README example', () => {
  it('transfers in both directions at once from two clients: no deadlock, no lost update', async () => {
    const balances = new Map([['1', 1_000], ['2', 1_000]]);
    const highest = new Map<string, number>();
    const tick = () => new Promise((r) => setImmediate(r));
    const accounts: Accounts = {
      balance: async (id) => (await tick(), balances.get(id)!),
      write: async (id, balance, token) => {
        await tick();
        if (token < (highest.get(id) ?? 0)) throw new Error(`stale token for ${id}`);
        highest.set(id, token);
        balances.set(id, balance);
      },
    };
    const pool = [client(), client()];
    await withTimeout(
      Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? transfer(pool[0], accounts, '1', '2', 10) : transfer(pool[1], accounts, '2', '1', 7)))),
      20_000,
      'the transfers',
    );
    expect([balances.get('1'), balances.get('2')]).toEqual([1_000 - 100 + 70, 1_000 + 100 - 70]);
    expect(await present('account:1', 'account:2')).toEqual([0, 0]);
  });
});
