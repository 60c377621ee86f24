import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import Redis from 'ioredis';
import { LockClient, LockError, LockLostError, LockTimeoutError, LockUnavailableError, type Connection, type LostEvent, type Permit } from '../../lib';
import { startCluster, startMasters, startServer, type RedisServer, type TestCluster } from '../kit/servers';
import { observeChannels } from '../helpers/channel-observer';
import { closeConnection, lockCluster, lockConnection } from '../helpers/clients';
import { commandCalls } from '../helpers/command-stats';
import * as sources from '../../lib/primitives/semaphore/sources';
import { unconnectedClient } from '../helpers/unconnected';
import { nextEvent, timerAt, waitFor, withTimeout } from '../helpers/wait';

// The semaphore (getSemaphore): at most `limit` permits held at once across clients,
// permits under leases (the watchdog's or given), waiters served in arrival order,
// nothing left in Redis after release, abort, timeout or close.

const WATCHDOG = 1_000;
const semKey = (name: string) => `holdfast:{${name}}:sem`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let n = 0;
const name = () => `sem-${++n}`;

/**
 * Runs `tasks` loops that each take `permits(task)` permits through `enter` `rounds`
 * times; reports the most permits ever held at once by the loops, and the sections run.
 */
async function contendPermits(
  tasks: number,
  rounds: number,
  permits: (task: number) => number,
  enter: (task: number, permits: number, body: () => Promise<void>) => Promise<unknown>,
): Promise<{ maxHeld: number; sections: number }> {
  let held = 0;
  let maxHeld = 0;
  let sections = 0;
  await Promise.all(
    Array.from({ length: tasks }, async (_, task) => {
      const p = permits(task);
      for (let i = 0; i < rounds; i++) {
        await enter(task, p, async () => {
          held += p;
          maxHeld = Math.max(maxHeld, held);
          await sleep(1 + (i % 3));
          held -= p;
          sections += 1;
        });
      }
    }),
  );
  return { maxHeld, sections };
}

describe('on one master', () => {
  let server: RedisServer;
  let redis: Redis;
  let conn: Connection;
  const clients: LockClient[] = [];
  const children: ChildProcess[] = [];
  const client = (options: { watchdogTimeout?: number } = {}) => {
    const c = new LockClient(conn, { watchdogTimeout: WATCHDOG, ...options });
    clients.push(c);
    return c;
  };
  /** Every key of the semaphores (locks would show up here too). */
  const leftovers = () => redis.keys('holdfast:*');
  const queue = (s: string) => redis.lrange(`${semKey(s)}:queue`, 0, -1);
  /** Script calls the server has run so far. */
  const scriptCalls = () => commandCalls(redis, 'evalsha', 'eval');

  beforeAll(async () => {
    server = await startServer();
    redis = new Redis(server.port, '127.0.0.1');
    conn = await lockConnection(server.port);
  });
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await redis.flushall();
  });
  afterAll(async () => {
    redis.disconnect();
    await closeConnection(conn);
    await server.stop();
  });

  it('never holds more than the limit across clients, permits > 1 included, and leaves nothing behind', async () => {
    const s = name();
    const pool = [client(), client(), client()];
    for (const permits of [() => 1, (task: number) => 1 + (task % 3)]) {
      const result = await withTimeout(
        contendPermits(9, 6, permits, (task, p, body) => pool[task % 3].getSemaphore(s, 4).run(body, { permits: p })),
        20_000,
        'contended semaphore',
      );
      expect(result.sections).toBe(54);
      expect(result.maxHeld).toBeLessThanOrEqual(4);
      // Contended enough to mean something: more than one holder at once happened.
      expect(result.maxHeld).toBeGreaterThan(1);
    }
    expect(await leftovers()).toEqual([]);
  });

  it('counts permits: availablePermits, tryAcquire null when they are not free, release gives them back', async () => {
    const sem = client().getSemaphore(name(), 5);
    expect(await sem.availablePermits()).toBe(5);
    const three = await sem.acquire({ permits: 3 });
    expect(three.permits).toBe(3);
    expect(typeof three.id).toBe('string');
    expect(await sem.availablePermits()).toBe(2);
    expect(await sem.tryAcquire({ permits: 3 })).toBeNull();
    const two = await sem.tryAcquire({ permits: 2 });
    expect(two).not.toBeNull();
    expect(await sem.availablePermits()).toBe(0);
    expect(await sem.tryAcquire()).toBeNull();
    await three.release();
    await three.release(); // again: nothing
    expect(await sem.availablePermits()).toBe(3);
    await two!.release();
    expect(await sem.availablePermits()).toBe(5);
    expect(await leftovers()).toEqual([]);
  });

  it('releases with `await using`', async () => {
    const sem = client().getSemaphore(name(), 2);
    {
      await using permit = await sem.acquire({ permits: 2 });
      expect(permit.permits).toBe(2);
      expect(await sem.availablePermits()).toBe(0);
    }
    expect(await sem.availablePermits()).toBe(2);
    expect(await leftovers()).toEqual([]);
  });

  it('a wait that runs out: LockTimeoutError for acquire and run, null for tryAcquire, and the queue is left', async () => {
    const s = name();
    const holder = await client().getSemaphore(s, 2).acquire({ permits: 2 });
    // Waiters on a 6 s heartbeat lease: an entry left behind would stay at least 4 s, so
    // the bound below tells a leave from an expiry with time to spare on a loaded host.
    const sem = client({ watchdogTimeout: 6_000 }).getSemaphore(s, 2);
    const started = performance.now();
    await expect(sem.acquire({ waitTime: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    await expect(sem.run(async () => 'ran', { waitTime: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await sem.tryAcquire({ waitTime: 100 })).toBeNull();
    await waitFor(async () => (await queue(s)).length === 0, { timeout: 2_000, message: 'timed-out waiters left the queue' });
    await holder.release();
    expect(await leftovers()).toEqual([]);
  });

  it('an aborted wait rejects with the reason and leaves nothing in Redis', async () => {
    const s = name();
    const holder = await client().getSemaphore(s, 1).acquire();
    const controller = new AbortController();
    const pending = client({ watchdogTimeout: 6_000 }).getSemaphore(s, 1).acquire({ signal: controller.signal });
    await waitFor(async () => (await queue(s)).length === 1, { message: 'waiter queued' });
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await waitFor(async () => (await queue(s)).length === 0, { timeout: 2_000, message: 'aborted waiter left the queue' });
    await holder.release();
    expect(await leftovers()).toEqual([]);
  });

  it('close() rejects a pending wait with a LockError and leaves nothing in Redis', async () => {
    const s = name();
    const holder = await client().getSemaphore(s, 1).acquire({ leaseTime: 20_000 });
    const other = client({ watchdogTimeout: 6_000 });
    const pending = other.getSemaphore(s, 1).acquire();
    await waitFor(async () => (await queue(s)).length === 1, { message: 'waiter queued' });
    await other.close();
    await expect(pending).rejects.toBeInstanceOf(LockError);
    await waitFor(async () => (await queue(s)).length === 0, { timeout: 2_000, message: 'closed waiter left the queue' });
    await holder.release();
    expect(await leftovers()).toEqual([]);
  });

  it('serves arrival order: a 5-permit waiter gets in while other clients keep asking for 1 permit', async () => {
    // Bound: once queued, the big waiter is passed by at most the requests queued before
    // it (the six stream workers, once each); while its first attempt is on its way
    // (one round trip, far less than a 20 ms section) each worker gets in once more at
    // most. So at most 12 grants from its call to its own, whatever the stream does after.
    const s = name();
    const stream = [client(), client()];
    let stop = false;
    let grants = 0;
    const workers = Array.from({ length: 6 }, async (_, i) => {
      while (!stop) {
        await stream[i % 2].getSemaphore(s, 5).run(async () => {
          grants += 1;
          await sleep(20);
        });
      }
    });
    await waitFor(() => grants >= 12, { message: 'stream running' });
    const big = client().getSemaphore(s, 5);
    const started = performance.now();
    const grantsAtCall = grants;
    const permit = await big.acquire({ permits: 5, waitTime: 10_000 });
    const passedBy = grants - grantsAtCall;
    expect(await big.availablePermits()).toBe(0);
    await permit.release();
    stop = true;
    await Promise.all(workers);
    expect(passedBy).toBeLessThanOrEqual(12);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(await leftovers()).toEqual([]);
  });

  it("a release grants the queue's head its permits in the same script and tells that waiter alone: it holds them without another attempt", async () => {
    const s = name();
    const holder = await client().getSemaphore(s, 2).acquire({ permits: 2, leaseTime: 20_000 });
    // A 30 s heartbeat lease: the waiter asks again on its own only every 10 s.
    const sem = client({ watchdogTimeout: 30_000 }).getSemaphore(s, 2);
    const observer = await observeChannels(redis, `${semKey(s)}:next`);
    try {
      const before = await scriptCalls();
      const waiting = sem.acquire({ permits: 1 });
      // Its first attempt, refused; subscribed; its second, refused: then it sleeps.
      await waitFor(async () => (await scriptCalls()) - before >= 2, { message: 'the waiter asked twice' });
      await waitFor(async () => (await queue(s)).length === 1, { message: 'the waiter queued' });
      const asked = await scriptCalls();
      await holder.release();
      const permit = await withTimeout(waiting, 2_000, 'the waiter got its permit');
      // The release was the only script call: the waiter took the grant from its message.
      expect((await scriptCalls()) - asked).toBe(1);
      expect(await observer.counts()).toEqual({ own: 1, shared: 0 });
      expect(observer.own[0]).toMatch(new RegExp(`^${permit.id} w\\w+ \\d+$`));
      expect(await sem.availablePermits()).toBe(1);
      await permit.release();
      expect(await leftovers()).toEqual([]);
    } finally {
      observer.close();
    }
  });

  it('grants, in arrival order, every waiter at the head whose permits fit, and none past the first that does not', async () => {
    const s = name();
    const holder = await client().getSemaphore(s, 4).acquire({ permits: 4, leaseTime: 20_000 });
    const observer = await observeChannels(redis, `${semKey(s)}:next`);
    try {
      // Each waiter in a client of its own with a 30 s heartbeat lease: it asks again on
      // its own only every 10 s, so every grant below is a release's.
      const order: string[] = [];
      const wait = async (label: string, permits: number) => {
        const pending = client({ watchdogTimeout: 30_000 })
          .getSemaphore(s, 4)
          .acquire({ permits })
          .then((permit) => {
            order.push(label);
            return permit;
          });
        await waitFor(async () => (await queue(s)).length === 'abc'.indexOf(label) + 1, { message: `${label} queued` });
        // Wrapped: an async function's result would be the permit itself.
        return { pending };
      };
      const { pending: a } = await wait('a', 3);
      const { pending: b } = await wait('b', 2);
      const { pending: c } = await wait('c', 1);
      await holder.release();
      // a's 3 fit; b's 2 do not (3 + 2 > 4), and c's 1, which would fit, may not pass b.
      const first = await withTimeout(a, 2_000, 'a granted');
      expect(await observer.counts()).toEqual({ own: 1, shared: 0 });
      expect(await queue(s)).toHaveLength(2);
      expect(order).toEqual(['a']);
      await first.release();
      // One release, two grants: b's 2 and c's 1 fit the 4 together.
      const [second, third] = await withTimeout(Promise.all([b, c]), 2_000, 'b and c granted');
      expect(await observer.counts()).toEqual({ own: 3, shared: 0 });
      expect(order.slice(0, 1)).toEqual(['a']);
      await second.release();
      await third.release();
      expect(await leftovers()).toEqual([]);
    } finally {
      observer.close();
    }
  });

  it('counts a grant whose message was lost from no later than the grant: taken up by the next heartbeat, the holder hears lost before the permit expires', async () => {
    const s = name();
    const holder = await client({ watchdogTimeout: 30_000 }).getSemaphore(s, 1).acquire();
    // Heartbeat 1.5 s: the waiter asks again every 500 ms, and takes the grant up then.
    const waiterClient = client({ watchdogTimeout: 1_500 });
    const got = waiterClient.getSemaphore(s, 1).acquire({ leaseTime: 2_000 });
    await waitFor(async () => (await queue(s)).length === 1 && ((await redis.pubsub('CHANNELS', `*${s}*`)) as string[]).length > 0, { message: 'the waiter queued and subscribed' });
    // Right after one of the waiter's heartbeats (its ticket is rewritten), so that its
    // next attempt, which takes the grant up, comes most of a heartbeat after the grant.
    const tickets = `${semKey(s)}:tickets`;
    const ticket = JSON.stringify(await redis.hvals(tickets));
    await waitFor(async () => JSON.stringify(await redis.hvals(tickets)) !== ticket, { interval: 2, message: 'a heartbeat of the waiter' });
    // The grant's message is lost: the subscriber connections are dropped as it goes out.
    await redis.client('KILL', 'TYPE', 'pubsub');
    await holder.release();
    // Set once the key's expiry is known; a loss heard before then is heard before it.
    let expiry: ReturnType<typeof timerAt> | undefined;
    const lost = nextEvent<LostEvent>(waiterClient, 'lost', 10_000).then((e) => ({ ...e, afterExpiry: expiry?.passed ?? false }));
    const permit = await withTimeout(got, 5_000, 'the waiter took the grant up');
    const asked = performance.now();
    const [expiryScore, [seconds, micros]] = await Promise.all([redis.zscore(`${semKey(s)}:expiry`, permit.id), redis.time()]);
    // The permit expires no earlier than this; the waiter's client-side deadline must come first.
    const expiresAt = asked + Number(expiryScore) - (Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000));
    expiry = timerAt(expiresAt);
    const { reason, afterExpiry } = await lost;
    expiry.clear();
    expect(reason).toBe('expired');
    expect(afterExpiry).toBe(false);
  }, 20_000);

  it('a release that wakes a stale head waiter instead of granting it grants the next one, and each leaves the queue under its own name', async () => {
    const s = name();
    const holder = await client({ watchdogTimeout: 30_000 }).getSemaphore(s, 2).acquire({ permits: 2 });
    // 30 s heartbeats: the waiters ask again on their own only every 10 s.
    const waits: Record<string, Promise<{ release(): Promise<void> }>> = {};
    for (const label of ['s1', 's2']) {
      waits[label] = client({ watchdogTimeout: 30_000 }).getSemaphore(s, 2).acquire();
      const length = Object.keys(waits).length;
      await waitFor(async () => (await queue(s)).length === length, { message: `${label} queued` });
    }
    const [first] = await queue(s);
    // s1's ticket dates from more than half its lease ago: a release wakes it to ask
    // again rather than grant it a lease mostly spent, and goes on to s2.
    const tickets = `${semKey(s)}:tickets`;
    const [wait, lease, at, ...rest] = (await redis.hget(tickets, first))!.split(' ');
    await redis.hset(tickets, first, [wait, lease, Number(at) - Number(lease), ...rest].join(' '));
    const before = await commandCalls(redis, 'evalsha', 'eval');
    await holder.release();
    const s2 = await withTimeout(waits.s2, 2_000, 's2 got in');
    // Woken, s1 asks again and takes the permit left: s2's grant took s2's place in the
    // queue, not s1's (a place left behind under s2's name would hold back every later waiter).
    const s1 = await withTimeout(waits.s1, 2_000, 's1 got in after its wake-up');
    // The release granted s2 (it took the grant from its message) and woke s1, whose one
    // attempt let it in: two script calls. Which of the two is seen in first is a race.
    expect((await commandCalls(redis, 'evalsha', 'eval')) - before).toBe(2);
    expect(await queue(s)).toEqual([]);
    await s1.release();
    await s2.release();
    expect(await leftovers()).toEqual([]);
  });

  it("a SIGKILLed holder's permits come back within its lease", async () => {
    const s = name();
    const proc = spawn(process.execPath, ['-r', 'tsx/cjs', 'spec/fixtures/semaphore-holder.ts', String(server.port), s, '3', '3'], {
      cwd: path.resolve(__dirname, '..', '..'),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(proc);
    let out = '';
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    await waitFor(() => out.includes('held'), { timeout: 15_000, message: `child holding (output: ${out})` });
    const sem = client().getSemaphore(s, 3);
    expect(await sem.tryAcquire()).toBeNull();
    proc.kill('SIGKILL');
    const killedAt = performance.now();
    const permit = await sem.acquire({ permits: 3, waitTime: 5_000 });
    // The child's watchdog lease is 1 s, renewed at a third of it: at most 1 s left.
    expect(performance.now() - killedAt).toBeLessThan(WATCHDOG + 500);
    await permit.release();
    expect(await leftovers()).toEqual([]);
  }, 30_000);

  it('the watchdog keeps a permit held for several leases, in its batches', async () => {
    const locks = client({ watchdogTimeout: 300 });
    const sem = locks.getSemaphore(name(), 2);
    let renewed = 0;
    sem.on('renewed', ({ kind }) => {
      expect(kind).toBe('semaphore');
      renewed += 1;
    });
    const a = await sem.acquire();
    const b = await sem.acquire();
    // Six renewals span two leases: the permits outlived their first lease because of them.
    await waitFor(() => renewed >= 6, { timeout: 5_000, message: 'six renewals' });
    expect(renewed).toBeGreaterThanOrEqual(6);
    expect(a.signal.aborted || b.signal.aborted).toBe(false);
    expect(await client().getSemaphore(sem.name, 2).tryAcquire()).toBeNull();
    await a.release();
    await b.release();
    expect(await leftovers()).toEqual([]);
  });

  it('a permit deleted from Redis is lost: `lost` (kind semaphore), the signal aborts, release rejects', async () => {
    const locks = client({ watchdogTimeout: 300 });
    const sem = locks.getSemaphore(name(), 3);
    const permit = await sem.acquire({ permits: 2 });
    const lost = nextEvent<LostEvent>(locks, 'lost', 2_000);
    await redis.del(semKey(sem.name), `${semKey(sem.name)}:expiry`);
    const event = await lost;
    expect(event).toMatchObject({ name: sem.name, owner: permit.id, kind: 'semaphore', reason: 'deleted' });
    expect(permit.signal.aborted).toBe(true);
    expect(permit.signal.reason).toBeInstanceOf(LockLostError);
    await expect(permit.release()).rejects.toBeInstanceOf(LockLostError);
    expect(await leftovers()).toEqual([]);
  });

  it('a leased permit expires while the event loop is blocked: lost (expired), and its permits are free again', async () => {
    const locks = client();
    const sem = locks.getSemaphore(name(), 1);
    const lost = nextEvent<LostEvent>(locks, 'lost', 3_000);
    const result = sem.run(
      async ({ signal }) => {
        const until = Date.now() + 400;
        while (Date.now() < until); // blocked past the lease
        await sleep(10);
        return signal.aborted;
      },
      { leaseTime: 200 },
    );
    await expect(result).rejects.toBeInstanceOf(LockLostError);
    expect((await lost).reason).toBe('expired');
    expect(await client().getSemaphore(sem.name, 1).availablePermits()).toBe(1);
  });

  it('reports acquired and released with kind semaphore and the permit id as owner', async () => {
    const sem = client().getSemaphore(name(), 2);
    const acquired = nextEvent<{ kind: string; owner: string }>(sem as never, 'acquired', 2_000);
    const released = nextEvent<{ kind: string; owner: string }>(sem as never, 'released', 2_000);
    const id = await sem.run(({ id: permitId }) => permitId);
    expect(await acquired).toMatchObject({ kind: 'semaphore', owner: id });
    expect(await released).toMatchObject({ kind: 'semaphore', owner: id });
  });

  it('clients that disagree on the limit get a LockError at once, not a retried wait', async () => {
    const s = name();
    const held = await client().getSemaphore(s, 3).acquire();
    const other = client().getSemaphore(s, 4);
    const started = performance.now();
    for (const call of [() => other.acquire({ waitTime: 5_000 }), () => other.tryAcquire(), () => other.run(async () => undefined), () => other.availablePermits()]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LockError);
      expect(error).not.toBeInstanceOf(LockUnavailableError);
      expect((error as Error).message).toMatch(/limit of 3 in Redis.*uses 4/);
    }
    expect(performance.now() - started).toBeLessThan(2_000);
    await held.release();
    // Nothing in use: the name starts afresh with whichever limit comes first.
    const fresh = await other.acquire();
    await fresh.release();
    expect(await leftovers()).toEqual([]);
  });

  it('run() rejects with LockLostError after fn when the permits were lost, and fn’s error wins', async () => {
    const sem = client({ watchdogTimeout: 300 }).getSemaphore(name(), 1);
    /** fn deletes its own permit, waits for the loss to abort its signal, then ends with `end`. */
    const losing = (end: () => unknown) =>
      sem.run(async ({ signal }) => {
        await redis.del(semKey(sem.name), `${semKey(sem.name)}:expiry`);
        await waitFor(() => signal.aborted, { message: 'signal aborted' });
        return end();
      });
    await expect(losing(() => 'done')).rejects.toBeInstanceOf(LockLostError);
    const mine = new Error('mine');
    await expect(
      losing(() => {
        throw mine;
      }),
    ).rejects.toBe(mine);
  });
});

describe('sem-acquire.lua, sem-release.lua and sem-leave.lua with a grant', () => {
  let server: RedisServer;
  let redis: Redis;
  const lease = 10_000;
  const heartbeat = 30_000;
  const keys = (s: string) => ['', ':expiry', ':queue', ':deadlines', ':tickets'].map((suffix) => `${semKey(s)}${suffix}`);
  const acquire = (s: string, id: string, permits: number, wait: string) =>
    redis.eval(sources.semAcquire, 5, ...keys(s), id, permits, 2, lease, heartbeat, wait, 'ch', 'publish') as Promise<(number | string)[]>;
  const release = (s: string, id: string) => redis.eval(sources.semRelease, 5, ...keys(s), id, 1, 'ch', 'publish') as Promise<(number | string)[]>;
  const leave = (s: string, id: string, wait: string) => redis.eval(sources.semLeave, 5, ...keys(s), id, wait, 'ch', 'publish');

  beforeAll(async () => {
    server = await startServer();
    redis = new Redis(server.port, '127.0.0.1');
  });
  afterEach(() => redis.flushall());
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  it("answers the granted wait's next attempt with that grant and what is left of its lease; a resend of it is a level, not more permits", async () => {
    const s = name();
    expect(await acquire(s, 'h:1:a:1', 2, '')).toEqual([1]);
    expect(await acquire(s, 'h:1:b:1', 1, 'w1')).toEqual([0, expect.any(Number), 1, 0]);
    const [kind, grant] = await release(s, 'h:1:a:1');
    expect(kind).toBe(2);
    expect(grant).toMatch(/^h:1:b:1 w1 \d+$/);
    expect(await redis.hget(semKey(s), 'h:1:b:1')).toBe('1,1');
    const [taken, left] = await acquire(s, 'h:1:b:1', 1, 'w1');
    expect(taken).toBe(1);
    expect(left).toBeGreaterThan(lease - 1_000);
    expect(left).toBeLessThanOrEqual(lease);
    expect(await acquire(s, 'h:1:b:1', 1, 'w1')).toEqual([1]);
    expect(await redis.hget(semKey(s), 'h:1:b:1')).toBe('1,2');
  });

  it('gives back, with the leave of its wait, a grant never taken up, and grants the next waiter', async () => {
    const s = name();
    await acquire(s, 'h:1:a:1', 2, '');
    await acquire(s, 'h:1:b:1', 2, 'w1');
    await acquire(s, 'h:1:c:1', 1, 'w2');
    const [, grant] = await release(s, 'h:1:a:1');
    expect(grant).toMatch(/^h:1:b:1 w1 /);
    // b holds both permits, unread; c waits behind it.
    expect(await redis.hget(semKey(s), 'used')).toBe('2');
    await leave(s, 'h:1:b:1', 'w1');
    expect(await redis.hget(semKey(s), 'h:1:b:1')).toBeNull();
    // The permits given back went on to c, the next in the queue.
    expect(await redis.hget(semKey(s), 'h:1:c:1')).toBe('1,1');
    expect(await redis.hget(`${semKey(s)}:tickets`, 'h:1:c:1')).toMatch(/^g w2 \d+$/);
    await leave(s, 'h:1:c:1', 'w2');
    expect(await redis.keys('holdfast:*')).toEqual([]);
  });

  it('counts a grant stamp above every refusal before it, across a fresh start of the name', async () => {
    const s = name();
    await acquire(s, 'h:1:a:1', 2, '');
    const refused = await acquire(s, 'h:1:b:1', 1, 'w1');
    const [, grant] = await release(s, 'h:1:a:1');
    const stamp = Number(String(grant).split(' ')[2]);
    expect(stamp).toBeGreaterThan(Number(refused[3]));
    await release(s, 'h:1:b:1');
    expect(await redis.keys('holdfast:*')).toEqual([]);
    // Afresh, the stamps start from the server's clock: above every stamp before.
    await acquire(s, 'h:1:c:1', 2, '');
    await acquire(s, 'h:1:d:1', 1, 'w2');
    const [, next] = await release(s, 'h:1:c:1');
    expect(Number(String(next).split(' ')[2])).toBeGreaterThan(stamp);
    await release(s, 'h:1:d:1');
  });
});

describe('bad input', () => {
  const current = unconnectedClient();

  it('throws TypeError/RangeError naming the argument, before anything is sent', async () => {
    const { locks } = current();
    expect(() => locks.getSemaphore('x', 0)).toThrow(RangeError);
    expect(() => locks.getSemaphore('x', 0)).toThrow(/limit/);
    expect(() => locks.getSemaphore('x', -1)).toThrow(RangeError);
    expect(() => locks.getSemaphore('x', 1.5)).toThrow(TypeError);
    expect(() => locks.getSemaphore('x', 1.5)).toThrow(/limit/);
    expect(() => locks.getSemaphore('x', '3' as never)).toThrow(/limit must be an integer/);
    expect(() => locks.getSemaphore('x', Infinity)).toThrow(TypeError);
    expect(() => locks.getSemaphore('', 3)).toThrow(RangeError);
    const sem = locks.getSemaphore('x', 3);
    await expect(sem.acquire({ permits: 0 })).rejects.toThrow(RangeError);
    await expect(sem.acquire({ permits: 0 })).rejects.toThrow(/permits/);
    await expect(sem.acquire({ permits: 4 })).rejects.toThrow(/permits must be at most the semaphore's limit \(3\)/);
    await expect(sem.tryAcquire({ permits: 1.5 })).rejects.toThrow(TypeError);
    await expect(sem.tryAcquire({ permits: 1.5 })).rejects.toThrow(/permits/);
    await expect(sem.run(async () => undefined, { permits: -2 })).rejects.toThrow(RangeError);
    await expect(sem.run('no' as never)).rejects.toThrow(/fn must be a function/);
    await expect(sem.acquire({ waitTime: -1 })).rejects.toThrow(/waitTime/);
    await expect(sem.acquire({ leaseTime: 5 })).rejects.toThrow(/leaseTime/);
    await expect(sem.acquire({ permit: 1 } as never)).rejects.toThrow(/unknown option 'permit'/);
    await expect(sem.acquire({ signal: 'x' } as never)).rejects.toThrow(/signal/);
  });
});

describe('topologies', () => {
  it('in quorum mode getSemaphore throws a LockError with the reason up front', async () => {
    const masters = await startMasters(3);
    const conns = masters.map((m) => new Redis(m.port, '127.0.0.1'));
    const locks = new LockClient(conns);
    try {
      expect(() => locks.getSemaphore('q', 3)).toThrow(LockError);
      expect(() => locks.getSemaphore('q', 3)).toThrow(/quorum mode.*exceed/);
    } finally {
      await locks.close();
      conns.forEach((c) => c.disconnect());
      await Promise.all(masters.map((m) => m.stop()));
    }
  });

  it('with syncReplicas getSemaphore throws a LockError up front', async () => {
    const redis = new Redis({ port: 1, lazyConnect: true, retryStrategy: () => null });
    redis.on('error', () => undefined);
    const locks = new LockClient(redis, { syncReplicas: { min: 1, timeout: 100 } });
    expect(() => locks.getSemaphore('s', 3)).toThrow(/syncReplicas/);
    await locks.close();
    redis.disconnect();
  });

  describe('on a Redis Cluster', () => {
    let cluster: TestCluster;
    let admin: InstanceType<typeof Redis.Cluster>;
    let conn: Connection;
    const clients: LockClient[] = [];

    beforeAll(async () => {
      cluster = await startCluster({ masters: 3 });
      admin = new Redis.Cluster(cluster.startupNodes);
      conn = await lockCluster(cluster.startupNodes);
    }, 60_000);
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.close()));
      admin.disconnect();
      await closeConnection(conn);
      await cluster.stop();
    });

    it('respects the limit across clients, wakes waiters (sharded pub/sub), renews, and leaves nothing behind', async () => {
      // 600 ms leases: short enough to renew several times below, long enough that a loaded
      // machine (the whole suite on 2 cores) does not let a permit expire between renewals.
      const pool = [new LockClient(conn, { watchdogTimeout: 600 }), new LockClient(conn, { watchdogTimeout: 600 })];
      clients.push(...pool);
      const names = ['c-a', 'c-b', 'c-c'];
      for (const s of names) {
        const result = await withTimeout(
          contendPermits(6, 4, (task) => 1 + (task % 2), (task, permits, body) => pool[task % 2].getSemaphore(s, 3).run(body, { permits })),
          20_000,
          `contended semaphore ${s} on a Cluster`,
        );
        expect(result).toMatchObject({ sections: 24 });
        expect(result.maxHeld).toBeLessThanOrEqual(3);
      }
      // A permit held past several watchdog leases, and a waiter woken by its release.
      const held: Permit = await pool[0].getSemaphore('c-a', 1).acquire();
      const waiting = pool[1].getSemaphore('c-a', 1).acquire({ waitTime: 10_000 });
      await sleep(1_800);
      expect(held.signal.aborted).toBe(false);
      await held.release();
      await (await waiting).release();
      const keys = (await Promise.all(admin.nodes('master').map((node) => node.keys('holdfast:*')))).flat();
      expect(keys).toEqual([]);
    }, 60_000);
  });
});
