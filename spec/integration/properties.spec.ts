/**
 * Property-based specs (fast-check):
 *  1. argument validation: any bad lease / wait / watchdogTimeout is a TypeError or
 *     RangeError naming the argument, and nothing is sent (a lazy ioredis on port 1
 *     stays in status 'wait');
 *  2. random sequences of lock / tryLock / unlock / forceUnlock / run / scope by a few
 *     owners (two long-lived scopes and the unscoped caller) against a model of who
 *     holds the lock and how often, checked with getHoldCount / isLocked after each
 *     step, on a real redis-server.
 */
import fc from 'fast-check';
import Redis from 'ioredis';
import { unconnectedClient } from '../helpers/unconnected';
import { LockClient, LockError, LockLostError, LockNotHeldError, type Lock } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';

describe('argument validation (properties)', () => {
  const current = unconnectedClient();
  let redis: Redis;
  let locks: LockClient;
  beforeEach(() => ({ redis, locks } = current()));

  /** Not a finite number from 100 ms to 2^31-1 ms. */
  const badLease = fc.oneof(
    fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 0, 99, 99.999, -100, Number.MIN_VALUE, -Number.MAX_VALUE, 2 ** 31, 1e20, Number.MAX_VALUE),
    fc.double({ max: 99.99, noNaN: false }),
    fc.integer({ min: -1e9, max: 99 }),
    fc.double({ min: 2 ** 31, noNaN: true }),
  );
  /** Not a finite number from 0 to 2^31-1 ms. */
  const badWait = fc.oneof(
    fc.constantFrom(Number.NaN, Infinity, -Infinity, -1, -Number.MIN_VALUE, 2 ** 31, 1e20),
    fc.double({ max: -Number.MIN_VALUE, noNaN: false }),
    fc.integer({ min: -1e9, max: -1 }),
    fc.double({ min: 2 ** 31, noNaN: true }),
  );
  const typeOrRange = (e: unknown) => e instanceof TypeError || e instanceof RangeError;

  async function rejection(call: () => Promise<unknown>): Promise<unknown> {
    try {
      await call();
    } catch (e) {
      return e;
    }
    throw new Error('did not reject');
  }

  it('rejects any bad lease, naming leaseTime, in every form, and sends nothing', async () => {
    let ran = 0;
    const forms: [string, (l: Lock, lease: number) => Promise<unknown>][] = [
      ['lock(lease)', (l, lease) => l.lock(lease)],
      ['lock({ leaseTime })', (l, lease) => l.lock({ leaseTime: lease })],
      ['tryLock(0, lease)', (l, lease) => l.tryLock(0, lease)],
      ['tryLock(undefined, lease)', (l, lease) => l.tryLock(undefined, lease)],
      ['tryLock({ leaseTime })', (l, lease) => l.tryLock({ leaseTime: lease })],
      ['run(fn, { leaseTime })', (l, lease) => l.run(() => ran++, { leaseTime: lease })],
      ['acquire({ leaseTime })', (l, lease) => l.acquire({ leaseTime: lease })],
    ];
    await fc.assert(
      fc.asyncProperty(badLease, fc.constantFrom(...forms), async (lease, [, form]) => {
        const e = await rejection(() => form(locks.getLock('p'), lease));
        expect(typeOrRange(e)).toBe(true);
        expect((e as Error).message).toMatch(/leaseTime/);
        // A non-number is a TypeError, a finite number below the minimum a RangeError.
        expect(e).toBeInstanceOf(Number.isFinite(lease) ? RangeError : TypeError);
      }),
      { numRuns: 200 },
    );
    expect(ran).toBe(0);
  });

  it('rejects any bad wait, naming waitTime, and sends nothing', async () => {
    const forms: [string, (l: Lock, wait: number) => Promise<unknown>][] = [
      ['tryLock(wait)', (l, wait) => l.tryLock(wait)],
      ['tryLock(wait, 1000)', (l, wait) => l.tryLock(wait, 1_000)],
      ['tryLock({ waitTime })', (l, wait) => l.tryLock({ waitTime: wait })],
      ['run(fn, { waitTime })', (l, wait) => l.run(() => undefined, { waitTime: wait })],
      ['acquire({ waitTime })', (l, wait) => l.acquire({ waitTime: wait })],
    ];
    await fc.assert(
      fc.asyncProperty(badWait, fc.constantFrom(...forms), async (wait, [, form]) => {
        const e = await rejection(() => form(locks.getLock('p'), wait));
        expect(typeOrRange(e)).toBe(true);
        expect((e as Error).message).toMatch(/waitTime/);
      }),
      { numRuns: 150 },
    );
  });

  it('rejects any bad watchdogTimeout at construction, naming it', () => {
    fc.assert(
      fc.property(badLease, (timeout) => {
        let error: unknown;
        try {
          new LockClient(redis, { watchdogTimeout: timeout });
        } catch (e) {
          error = e;
        }
        expect(typeOrRange(error)).toBe(true);
        expect((error as Error).message).toMatch(/watchdogTimeout/);
      }),
      { numRuns: 100 },
    );
  });

  it('accepts any finite lease of at least 100 ms without sending anything before the call', () => {
    // Construction and getLock are local; only the lock call itself would connect.
    fc.assert(
      fc.property(fc.double({ min: 100, max: 1e9, noNaN: true }), (timeout) => {
        const c = new LockClient(redis, { watchdogTimeout: timeout });
        c.getLock('p');
        void c.close();
      }),
      { numRuns: 50 },
    );
  });
});

// ---------------------------------------------------------------------------
// Model-based sequences on a real Redis

type OwnerName = 'A' | 'B' | 'U';
const OWNERS: readonly OwnerName[] = ['A', 'B', 'U'];

type Op =
  | { kind: 'lock' | 'tryLock' | 'unlock' | 'forceUnlock' | 'run' | 'scope'; owner: OwnerName };

/**
 * Runs closures one after the other inside one async context: a long-lived owner
 * scope (locks.scope around the loop), or no scope at all for 'U'.
 */
class Actor {
  private readonly queue: { fn: () => Promise<unknown>; resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
  private wake: (() => void) | undefined;
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(enter: (loop: () => Promise<void>) => Promise<void>) {
    this.loop = enter(() => this.run());
  }

  do<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.wake?.();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    for (;;) {
      let item;
      while ((item = this.queue.shift())) {
        try {
          item.resolve(await item.fn());
        } catch (e) {
          item.reject(e);
        }
      }
      if (this.stopped) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

/** What the model expects. */
interface Model {
  holder: { owner: OwnerName; count: number } | undefined;
  /** Scopes: levels of a hold lost to forceUnlock, each unlock() rejects with LockLostError. */
  lostLevels: Record<'A' | 'B', number>;
  /** The unscoped handle's holds, oldest first (unlock takes the oldest live one, else the oldest lost): lost or live. */
  unscoped: ('lost' | 'live')[];
}

const outcome = async (p: Promise<unknown>): Promise<string> => {
  try {
    const v = await p;
    return `ok:${String(v)}`;
  } catch (e) {
    if (e instanceof LockLostError) return 'LockLostError';
    if (e instanceof LockNotHeldError) return 'LockNotHeldError';
    if (e instanceof LockError) return `LockError`;
    return `other:${(e as Error).message}`;
  }
};

describe('random operation sequences against a model (real Redis)', () => {
  let server: RedisServer;
  let redis: Redis;
  let runId = 0;

  beforeAll(async () => {
    server = await startServer();
    redis = new Redis(server.port, '127.0.0.1');
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  const opArb: fc.Arbitrary<Op> = fc.record({
    kind: fc.constantFrom('lock', 'tryLock', 'tryLock', 'unlock', 'unlock', 'forceUnlock', 'run', 'scope'),
    owner: fc.constantFrom(...OWNERS),
  }) as fc.Arbitrary<Op>;

  it('agrees with the model after every step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 40, size: 'max' }), async (ops) => {
        const locks = new LockClient(redis, { watchdogTimeout: 10_000 });
        const name = `prop-${process.pid}-${++runId}`;
        const actors: Record<OwnerName, Actor> = {
          A: new Actor((loop) => locks.scope(loop)),
          B: new Actor((loop) => locks.scope(loop)),
          U: new Actor((loop) => loop()),
        };
        // One handle per owner: the unscoped handle remembers the holds it took.
        const handles: Record<OwnerName, Lock> = { A: locks.getLock(name), B: locks.getLock(name), U: locks.getLock(name) };
        const model: Model = { holder: undefined, lostLevels: { A: 0, B: 0 }, unscoped: [] };
        const free = () => model.holder === undefined;
        const holds = (o: OwnerName) => model.holder?.owner === o;
        /** o may take the lock now: free, or a scope reentering its own hold. */
        const canTake = (o: OwnerName) => free() || (o !== 'U' && holds(o));
        const take = (o: OwnerName) => {
          if (holds(o)) model.holder!.count += 1;
          else {
            model.holder = { owner: o, count: 1 };
            if (o === 'U') model.unscoped.push('live');
            else model.lostLevels[o] = 0; // a fresh hold replaces the lost one
          }
        };
        const expectedCount = (o: OwnerName) => (holds(o) ? model.holder!.count : 0);
        const log: string[] = [];

        try {
          for (const op of ops) {
            const { owner: o } = op;
            const lock = handles[o];
            const act = <T>(fn: () => Promise<T>) => actors[o].do(fn);
            let got: string;
            let want: string;
            switch (op.kind) {
              case 'lock':
                if (canTake(o)) {
                  got = await outcome(act(() => lock.lock()));
                  want = 'ok:undefined';
                  take(o);
                } else {
                  // lock() would wait forever: wait a little instead (the local queue), and fail.
                  got = await outcome(act(() => lock.tryLock(30)));
                  want = 'ok:false';
                }
                break;
              case 'tryLock':
                want = `ok:${canTake(o)}`;
                got = await outcome(act(() => lock.tryLock()));
                if (canTake(o)) take(o);
                break;
              case 'unlock':
                got = await outcome(act(() => lock.unlock()));
                if (o === 'U') {
                  // The oldest live hold goes first; a lost one answers only when none is live.
                  const live = model.unscoped.indexOf('live');
                  const [first] = model.unscoped.splice(live === -1 ? 0 : live, 1);
                  want = first === undefined ? 'LockNotHeldError' : first === 'lost' ? 'LockLostError' : 'ok:undefined';
                  if (first === 'live') model.holder = undefined;
                } else if (holds(o)) {
                  want = 'ok:undefined';
                  if (--model.holder!.count === 0) model.holder = undefined;
                } else if (model.lostLevels[o] > 0) {
                  want = 'LockLostError';
                  model.lostLevels[o] -= 1;
                } else want = 'LockNotHeldError';
                break;
              case 'forceUnlock':
                want = `ok:${!free()}`;
                got = await outcome(act(() => lock.forceUnlock()));
                if (model.holder) {
                  const h = model.holder;
                  if (h.owner === 'U') model.unscoped[model.unscoped.lastIndexOf('live')] = 'lost';
                  else model.lostLevels[h.owner] = h.count;
                  model.holder = undefined;
                }
                break;
              case 'run': {
                // Reenters when the owner scope holds it; else a child scope that needs the lock free.
                const ok = canTake(o);
                const inside = o !== 'U' && holds(o) ? model.holder!.count + 1 : 1;
                want = ok ? `ok:${inside}` : 'LockError';
                got = await outcome(act(() => lock.run(() => lock.getHoldCount(), { waitTime: ok ? undefined : 30 })));
                break;
              }
              case 'scope': {
                // A fresh scope: take, reenter, count, release twice.
                const ok = free();
                want = ok ? 'ok:2' : 'ok:0';
                got = await outcome(
                  act(() =>
                    locks.scope(async () => {
                      if (!(await lock.tryLock())) return 0;
                      await lock.tryLock();
                      const n = await lock.getHoldCount();
                      await lock.unlock();
                      await lock.unlock();
                      return n;
                    }),
                  ),
                );
                break;
              }
            }
            log.push(`${o}.${op.kind} -> ${got}`);
            if (process.env.PROP_DEBUG) process.stderr.write(`${o}.${op.kind} got ${got} want ${want}\n`);
            expect({ step: log.join(' | '), got }).toEqual({ step: log.join(' | '), got: want });
            // State, as each owner sees it.
            for (const owner of OWNERS) {
              const count = await actors[owner].do(() => handles[owner].getHoldCount());
              expect({ step: log.join(' | '), owner, count }).toEqual({ step: log.join(' | '), owner, count: expectedCount(owner) });
            }
            expect({ step: log.join(' | '), locked: await handles.U.isLocked() }).toEqual({ step: log.join(' | '), locked: !free() });
          }
        } finally {
          await locks.getLock(name).forceUnlock();
          await Promise.all(OWNERS.map((o) => actors[o].stop()));
          await locks.close();
        }
      }),
      // Shrinking replays sequences against Redis: bound it, so a failure reports its
      // (partly shrunk) counterexample instead of hitting the jest timeout.
      { numRuns: 30, interruptAfterTimeLimit: 40_000, markInterruptAsFailure: true },
    );
  }, 60_000);
});
