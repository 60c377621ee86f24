import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import Redis from 'ioredis';
import { LockClient, LockError, LockLostError, type Connection, type LostEvent } from '../../lib';
import { startServer, startMasters, type RedisServer } from '../kit/servers';
import { closeConnection, lockConnection } from '../helpers/clients';
import { nextEvent, timerAt, waitFor, withTimeout } from '../helpers/wait';
import { observeChannels } from '../helpers/channel-observer';
import { commandCalls } from '../helpers/command-stats';

// getReadWriteLock on one master: readers share, a writer excludes, reentrancy and
// downgrade per scope, upgrade refused before anything is sent, writers not starved,
// one lease per reader (a killed reader frees only its share), fencing tokens, and
// nothing left in Redis.

let server: RedisServer;
/** Admin connection (ioredis); the lock's own is `conn`, of the kind under test. */
let redis: Redis;
let conn: Connection;
const clients: LockClient[] = [];
const children: ChildProcess[] = [];
let n = 0;
const name = () => `rw-${++n}`;
const base = (lockName: string) => `holdfast:{${lockName}}`;

function client(watchdogTimeout = 1_000): LockClient {
  const c = new LockClient(conn, { watchdogTimeout });
  clients.push(c);
  return c;
}

/** Every key of a name; after the last release only the fencing counter may stay (with a TTL). */
async function leftovers(lockName: string): Promise<string[]> {
  const keys = await redis.keys(`${base(lockName)}*`);
  for (const k of keys) expect(await redis.pttl(k)).toBeGreaterThan(0);
  return keys.filter((k) => k !== `${base(lockName)}:fence`).sort();
}

/** EVALSHA/EVAL calls the server has run so far (what a refused call must not add to). */
function scriptCalls(): Promise<number> {
  return commandCalls(redis, 'evalsha', 'eval');
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
  await closeConnection(conn);
  redis.disconnect();
  await server.stop();
});

describe('sharing and exclusion', () => {
  it('lets readers share, across clients, and shows them in inspect()', async () => {
    const lockName = name();
    const [a, b] = [client().getReadWriteLock(lockName), client().getReadWriteLock(lockName)];
    await a.readLock().lock();
    await b.readLock().lock();
    expect(await b.readLock().tryLock()).toBe(true);
    const info = await a.readLock().inspect();
    expect(info.locked).toBe(true);
    expect(info.holders.map((h) => h.count)).toEqual([1, 1, 1]);
    expect(info.holders.every((h) => h.pid === process.pid)).toBe(true);
    expect(info.waiters).toBe(0);
    expect(await a.writeLock().isLocked()).toBe(false);
    expect(await a.readLock().isLocked()).toBe(true);
    for (const rw of [a, b, b]) await rw.readLock().unlock();
    expect(await leftovers(lockName)).toEqual([]);
  });

  it('keeps a writer out while anyone reads, and readers and writers out while one writes', async () => {
    const lockName = name();
    const [a, b] = [client().getReadWriteLock(lockName), client().getReadWriteLock(lockName)];
    await a.readLock().lock();
    expect(await b.writeLock().tryLock()).toBe(false);
    expect(await b.writeLock().tryLock(150)).toBe(false);
    await a.readLock().unlock();
    await b.writeLock().lock();
    expect(await a.readLock().tryLock()).toBe(false);
    expect(await a.writeLock().tryLock()).toBe(false);
    expect((await a.writeLock().inspect()).holders).toHaveLength(1);
    // A waiting reader gets in once the writer leaves.
    const reading = a.readLock().tryLock(2_000);
    await waitFor(async () => (await a.readLock().inspect()).waiters === 1, { message: 'the reader queued' });
    await b.writeLock().unlock();
    expect(await reading).toBe(true);
    await a.readLock().unlock();
    expect(await leftovers(lockName)).toEqual([]);
  });
});

describe('scopes', () => {
  it('reenters both sides; a writer may read and then downgrade', async () => {
    const locks = client();
    const rw = locks.getReadWriteLock(name());
    const other = client().getReadWriteLock(rw.name);
    await locks.scope(async () => {
      await rw.readLock().lock();
      await rw.readLock().run(async () => expect(await rw.readLock().getHoldCount()).toBe(2));
      await rw.readLock().unlock();
      expect(await rw.readLock().isHeldByCurrentScope()).toBe(false);

      await rw.writeLock().lock();
      await rw.writeLock().lock();
      expect(await rw.writeLock().getHoldCount()).toBe(2);
      // The writer's scope reads, in this scope (run() makes no child that would wait).
      const token = await rw.readLock().run(async ({ token }) => {
        expect(await rw.readLock().getHoldCount()).toBe(1);
        return token;
      });
      expect(token).toBeGreaterThan(0);
      await rw.readLock().lock();
      await rw.writeLock().unlock();
      await rw.writeLock().unlock();
      // Downgraded: still reading, another reader may join, a writer may not.
      expect(await rw.readLock().getHoldCount()).toBe(1);
      // (Scopes are process-wide: another client's calls get a scope of their own here.)
      await locks.scope(async () => {
        expect(await other.readLock().tryLock()).toBe(true);
        await other.readLock().unlock();
      });
      expect(await locks.scope(() => other.writeLock().tryLock())).toBe(false);
      await rw.readLock().unlock();
    });
    expect(await other.writeLock().tryLock()).toBe(true);
    await other.writeLock().unlock();
  });

  it('refuses an upgrade at once with a LockError, sending nothing', async () => {
    const locks = client();
    const rw = locks.getReadWriteLock(name());
    await locks.scope(async () => {
      await rw.readLock().lock();
      const before = await scriptCalls();
      const started = performance.now();
      for (const attempt of [() => rw.writeLock().lock(), () => rw.writeLock().tryLock(5_000), () => rw.writeLock().run(() => 'never'), () => rw.writeLock().acquire()]) {
        await expect(attempt()).rejects.toThrow(LockError);
      }
      await expect(rw.writeLock().lock()).rejects.toThrow(/holds only its read lock/);
      expect(performance.now() - started).toBeLessThan(500);
      expect(await scriptCalls()).toBe(before + 0);
      await rw.readLock().unlock();
      // Released: the same scope may now write.
      await rw.writeLock().run(() => undefined);
    });
  });

  it('lets a reader reenter while a writer waits, and queues new readers of other owners behind it', async () => {
    const locks = client();
    const rw = locks.getReadWriteLock(name());
    const other = client().getReadWriteLock(rw.name);
    const writing = locks.scope(async () => {
      await waitFor(async () => (await rw.readLock().inspect()).holders.length === 1, { message: 'the reader holds' });
      if (!(await other.writeLock().tryLock(5_000))) return false;
      await other.writeLock().unlock();
      return true;
    });
    await locks.scope(async () => {
      await rw.readLock().lock();
      await waitFor(async () => (await rw.readLock().inspect()).waiters === 1, { message: 'the writer queued' });
      // No deadlock: our own nested read is granted even though a writer waits.
      expect(await rw.readLock().tryLock()).toBe(true);
      // Another owner's new read waits behind the writer.
      expect(await locks.scope(() => other.readLock().tryLock())).toBe(false);
      expect(await locks.scope(() => other.readLock().tryLock(100))).toBe(false);
      await rw.readLock().unlock();
      await rw.readLock().unlock();
    });
    expect(await writing).toBe(true);
    expect(await leftovers(rw.name)).toEqual([]);
  });
});

describe('no writer starvation', () => {
  // 8 tasks keep reading, staggered, 40 ms each with no gap: without writer preference
  // the read side never empties while they run (3 s), and a writer would wait it out.
  // With it the writer gets in once the reads under way when it queued have ended:
  // within one read (40 ms) plus a wake-up and a retry; the bound below is that plus
  // room for a loaded machine, far under the 2.5 s the readers go on for.
  const READ = 40;
  const BOUND = READ + 400;

  it(`lets a writer in within ${BOUND} ms of a stream of readers from 8 tasks`, async () => {
    const lockName = name();
    const locks = client();
    const rw = locks.getReadWriteLock(lockName);
    const until = performance.now() + 3_000;
    let reads = 0;
    let writing = false;
    let overlap = false;
    // Staggered starts: at every moment some read is under way.
    const reader = async (_: unknown, i: number) => {
      await new Promise((r) => setTimeout(r, (i * READ) / 8));
      while (performance.now() < until) {
        await rw.readLock().run(async () => {
          if (writing) overlap = true;
          reads += 1;
          await new Promise((r) => setTimeout(r, READ));
        });
      }
    };
    const tasks = Array.from({ length: 8 }, reader);
    await waitFor(() => reads >= 16, { message: 'readers under way' });
    const asked = performance.now();
    const waited = await client().getReadWriteLock(lockName).writeLock().run(async () => {
      writing = true;
      const w = performance.now() - asked;
      await new Promise((r) => setTimeout(r, 20));
      writing = false;
      return w;
    });
    expect(waited).toBeLessThan(BOUND);
    expect(overlap).toBe(false);
    const readsAtWrite = reads;
    await Promise.all(tasks);
    // Readers went on after the writer (they were queued, not starved either).
    expect(reads).toBeGreaterThan(readsAtWrite);
    expect(await leftovers(lockName)).toEqual([]);
  }, 15_000);
});

describe('leases', () => {
  it('renews a read hold with the watchdog and reports it with kind read', async () => {
    const locks = client(600);
    const rw = locks.getReadWriteLock(name());
    const renewed = nextEvent<{ kind: string; leaseTime: number }>(locks, 'renewed', 2_000);
    const lost: unknown[] = [];
    locks.on('lost', (e) => lost.push(e));
    await rw.readLock().lock();
    expect(await renewed).toMatchObject({ kind: 'read', leaseTime: 600 });
    // Three leases later it is still held (no loss told: a loaded machine that starves
    // the renewals tells one, which this spec is not about), and a writer is kept out.
    await new Promise((r) => setTimeout(r, 1_800));
    expect(lost).toEqual([]);
    expect(await rw.readLock().getHoldCount()).toBe(1);
    expect(await client().getReadWriteLock(rw.name).writeLock().tryLock()).toBe(false);
    await rw.readLock().unlock();
  });

  it('renews the read holds of several names in one batch, each by its own keys', async () => {
    const locks = client(300);
    const names = [name(), name(), name()];
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    let renewed = 0;
    locks.on('renewed', () => (renewed += 1));
    const readers = names.map((x) => locks.getReadWriteLock(x).readLock());
    await Promise.all(readers.map((r) => r.lock()));
    await waitFor(() => renewed >= 9, { timeout: 3_000, message: 'three renewals of each' });
    expect(lost).toEqual([]);
    for (const r of readers) await r.unlock();
  });

  it("frees a SIGKILLed reader's share within its lease while another reader keeps its own", async () => {
    const lockName = name();
    const proc = spawn(process.execPath, ['-r', 'tsx/cjs', 'spec/fixtures/reader.ts', String(server.port), lockName], {
      cwd: path.resolve(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(proc);
    let out = '';
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    await waitFor(() => out.includes('held'), { timeout: 15_000, message: `the child reads (${out})` });

    const locks = client(1_000);
    const rw = locks.getReadWriteLock(lockName);
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    await rw.readLock().lock();
    expect((await rw.readLock().inspect()).holders).toHaveLength(2);
    const writer = client().getReadWriteLock(lockName).writeLock();
    const writing = writer.tryLock(10_000);

    proc.kill('SIGKILL');
    const killed = performance.now();
    // The child's lease is 1 s from its last renewal: its share goes within it.
    await waitFor(async () => (await rw.readLock().inspect()).holders.length === 1, { timeout: 1_500, interval: 20, message: "the dead reader's share went" });
    expect(performance.now() - killed).toBeLessThan(1_300);
    // Ours stays: still held, renewed, not lost; the writer still waits for it.
    await new Promise((r) => setTimeout(r, 500));
    expect(await rw.readLock().getHoldCount()).toBe(1);
    expect(lost).toEqual([]);
    expect(await writer.isLocked()).toBe(false);
    await rw.readLock().unlock();
    expect(await writing).toBe(true);
    await writer.unlock();
    expect(await leftovers(lockName)).toEqual([]);
  }, 30_000);

  it('loses a read hold whose keys were deleted, and one taken by a writer meanwhile', async () => {
    const locks = client(300);
    const rw = locks.getReadWriteLock(name());
    await locks.scope(async () => {
      await rw.readLock().lock();
      const lost = nextEvent<LostEvent>(locks, 'lost', 2_000);
      await redis.del(`${base(rw.name)}:read`, `${base(rw.name)}:readers`);
      expect(await lost).toMatchObject({ kind: 'read', reason: 'deleted' });
      await expect(rw.readLock().unlock()).rejects.toThrow(LockLostError);

      await rw.readLock().lock();
      const taken = nextEvent<LostEvent>(locks, 'lost', 2_000);
      // Deleted behind the client's back (a forceUnlock would tell the holder 'deleted' at once).
      await redis.del(`${base(rw.name)}:read`, `${base(rw.name)}:readers`);
      const other = client().getReadWriteLock(rw.name).writeLock();
      await other.lock();
      expect(await taken).toMatchObject({ kind: 'read', reason: 'taken' });
      await expect(rw.readLock().unlock()).rejects.toThrow(LockLostError);
      await other.unlock();
    });
  });

  it('ends a leased read hold with its lease, and a leased write hold too', async () => {
    const locks = client();
    const rw = locks.getReadWriteLock(name());
    const lost = nextEvent<LostEvent>(locks, 'lost', 2_000);
    await rw.readLock().lock(200);
    expect(await lost).toMatchObject({ kind: 'read', reason: 'expired' });
    await waitFor(async () => !(await rw.readLock().isLocked()), { message: 'the read lease ran out in Redis' });
    const lostWrite = nextEvent<LostEvent>(locks, 'lost', 2_000);
    await rw.writeLock().lock(200);
    expect(await lostWrite).toMatchObject({ kind: 'write', reason: 'expired' });
  });
});

describe('fencing tokens', () => {
  it('mints one per write; a read hold carries the last writer token', async () => {
    const locks = client();
    const rw = locks.getReadWriteLock(name());
    expect(await rw.readLock().run(({ token }) => token)).toBe(0);
    const t1 = await rw.writeLock().run(({ token }) => token);
    expect(await rw.readLock().run(({ token }) => token)).toBe(t1);
    const t2 = await rw.writeLock().run(({ token }) => token);
    expect(t2).toBeGreaterThan(t1);
    const held = await rw.readLock().acquire();
    expect(held.token).toBe(t2);
    expect((await rw.readLock().inspect()).token).toBe(t2);
    await held.release();
  });
});

describe('events', () => {
  it('carry kind read and write', async () => {
    const locks = client();
    const rw = locks.getReadWriteLock(name());
    const kinds: string[] = [];
    locks.on('acquired', (e) => kinds.push(`acquired:${e.kind}`));
    locks.on('released', (e) => kinds.push(`released:${e.kind}`));
    await rw.readLock().run(() => undefined);
    await rw.writeLock().run(() => undefined);
    expect(kinds).toEqual(['acquired:read', 'released:read', 'acquired:write', 'released:write']);
  });
});

describe('giving up leaves nothing behind', () => {
  it('after timeouts, aborts, close and forceUnlock', async () => {
    const lockName = name();
    const holder = client().getReadWriteLock(lockName);
    const locks = client();
    const rw = locks.getReadWriteLock(lockName);
    await holder.writeLock().lock();
    expect(await rw.readLock().tryLock(100)).toBe(false);
    expect(await rw.writeLock().tryLock(100)).toBe(false);
    const controller = new AbortController();
    const aborted = rw.readLock().lock({ signal: controller.signal });
    const waitingWriter = rw.writeLock().lock();
    await waitFor(async () => (await rw.readLock().inspect()).waiters === 2, { message: 'both waiters queued' });
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    await waitFor(async () => (await rw.readLock().inspect()).waiters === 1, { message: 'the aborted reader left the queue' });
    await locks.close();
    await expect(waitingWriter).rejects.toThrow(LockError);
    await waitFor(async () => (await holder.readLock().inspect()).waiters === 0, { message: 'the closed writer left the queue' });
    expect(await holder.writeLock().forceUnlock()).toBe(true);
    expect(await holder.writeLock().forceUnlock()).toBe(false);
    expect(await leftovers(lockName)).toEqual([]);
  });
});

describe('a release grants the head in the same script', () => {
  // Every waiter below is in a client with a 30 s heartbeat lease: it asks again on its
  // own only every 10 s, so every grant within the 2 s bounds is a release's.
  const queue = (lockName: string) => redis.lrange(`${base(lockName)}:queue`, 0, -1);
  /** A wait on one side in a client of its own; `order` says who got in when. */
  function waiter(lockName: string, side: 'read' | 'write', label: string, order: string[]) {
    const lock = client(30_000).getReadWriteLock(lockName);
    const pending = (side === 'read' ? lock.readLock() : lock.writeLock()).acquire().then((held) => {
      order.push(label);
      return held;
    });
    // Wrapped: an async function's result would be the hold itself.
    return { pending };
  }
  /** Runs each script once, so that the server knows it: no EVALSHA refused and resent as EVAL in a count. */
  beforeAll(async () => {
    const rw = client().getReadWriteLock(name());
    for (const side of [rw.readLock(), rw.writeLock()]) {
      expect(await side.tryLock()).toBe(true);
      await side.unlock();
    }
  });

  it('the last reader\'s release grants the waiting writer and tells it alone; a reader that came after the writer does not pass it', async () => {
    const lockName = name();
    const order: string[] = [];
    const reader = await client(30_000).getReadWriteLock(lockName).readLock().acquire();
    const observer = await observeChannels(redis, `${base(lockName)}:next:w`);
    try {
      const before = await scriptCalls();
      const { pending: writer } = waiter(lockName, 'write', 'w', order);
      await waitFor(async () => (await queue(lockName)).length === 1, { message: 'the writer queued' });
      const { pending: later } = waiter(lockName, 'read', 'r', order);
      // Each waiter's first attempt, refused; subscribed; its second, refused: then it sleeps.
      await waitFor(async () => (await scriptCalls()) - before >= 4, { message: 'each waiter asked twice' });
      expect(await queue(lockName)).toHaveLength(2);
      const asked = await scriptCalls();
      await reader.release();
      const w = await withTimeout(writer, 2_000, 'the writer got in');
      // The release was the only script call: the writer took the grant from its message.
      expect((await scriptCalls()) - asked).toBe(1);
      expect(await observer.counts()).toEqual({ own: 1, shared: 0 });
      expect(observer.own[0]).toMatch(/^\S+ w\w+ \d+ \d+$/);
      expect(order).toEqual(['w']);
      await w.release();
      const r = await withTimeout(later, 2_000, 'the later reader got in');
      expect(order).toEqual(['w', 'r']);
      await r.release();
      expect(await leftovers(lockName)).toEqual([]);
    } finally {
      observer.close();
    }
  });

  it('a release that wakes a stale head reader instead of granting it grants the next one, and each leaves the queue under its own name', async () => {
    const lockName = name();
    const holder = await client(30_000).getReadWriteLock(lockName).writeLock().acquire();
    const waits: Record<string, Promise<{ release(): Promise<void> }>> = {};
    for (const label of ['r1', 'r2']) {
      waits[label] = waiter(lockName, 'read', label, []).pending;
      const length = Object.keys(waits).length;
      await waitFor(async () => (await queue(lockName)).length === length, { message: `${label} queued` });
    }
    const [first, second] = await queue(lockName);
    // r1's ticket dates from more than half its lease ago: a release wakes it to ask
    // again rather than grant it a lease mostly spent, and goes on to r2.
    const tickets = `${base(lockName)}:tickets`;
    const [wait, lease, at, side] = (await redis.hget(tickets, first))!.split(' ');
    await redis.hset(tickets, first, [wait, lease, Number(at) - Number(lease), side].join(' '));
    const before = await scriptCalls();
    await holder.release();
    const r2 = await withTimeout(waits.r2, 2_000, 'r2 got in');
    // Woken, r1 asks again and reads beside r2: r2's grant took r2's place in the queue,
    // not r1's (a place left behind under r2's name would block every later caller).
    const r1 = await withTimeout(waits.r1, 2_000, 'r1 got in after its wake-up');
    // The release granted r2 (it took the grant from its message) and woke r1, whose one
    // attempt let it in: two script calls. Which of the two is seen in first is a race.
    expect((await scriptCalls()) - before).toBe(2);
    expect(second).not.toBe(first);
    expect(await queue(lockName)).toEqual([]);
    expect(await redis.exists(`${base(lockName)}:deadlines`)).toBe(0);
    await r1.release();
    await r2.release();
    expect(await leftovers(lockName)).toEqual([]);
  });

  it('one release grants every reader at the head up to the first writer, together', async () => {
    const lockName = name();
    const order: string[] = [];
    const holder = await client(30_000).getReadWriteLock(lockName).writeLock().acquire();
    const observer = await observeChannels(redis, `${base(lockName)}:next:r`);
    try {
      const waits: Record<string, Promise<{ release(): Promise<void> }>> = {};
      const before = await scriptCalls();
      for (const [label, side] of [['r1', 'read'], ['r2', 'read'], ['w', 'write'], ['r3', 'read']] as const) {
        waits[label] = waiter(lockName, side, label, order).pending;
        const length = Object.keys(waits).length;
        await waitFor(async () => (await queue(lockName)).length === length, { message: `${label} queued` });
      }
      await waitFor(async () => (await scriptCalls()) - before >= 8, { message: 'each waiter asked twice' });
      const asked = await scriptCalls();
      await holder.release();
      const [r1, r2] = await withTimeout(Promise.all([waits.r1, waits.r2]), 2_000, 'r1 and r2 got in');
      // One script call for both: the release granted them in arrival order, one message each.
      expect((await scriptCalls()) - asked).toBe(1);
      expect(await observer.counts()).toEqual({ own: 2, shared: 0 });
      expect(await queue(lockName)).toHaveLength(2);
      expect(order.sort()).toEqual(['r1', 'r2']);
      await r1.release();
      expect(order).toHaveLength(2);
      // The last reader's release grants the writer; r3 stays behind it.
      await r2.release();
      const w = await withTimeout(waits.w, 2_000, 'the writer got in');
      expect(order.slice(2)).toEqual(['w']);
      await w.release();
      const r3 = await withTimeout(waits.r3, 2_000, 'r3 got in');
      await r3.release();
      expect(await leftovers(lockName)).toEqual([]);
    } finally {
      observer.close();
    }
  });

  it('counts a grant whose message was lost from no later than the grant: taken up by the next heartbeat, the holder hears lost before the key expires', async () => {
    const lockName = name();
    const holder = await client(30_000).getReadWriteLock(lockName).writeLock().acquire();
    // Heartbeat 1.5 s: the waiter asks again every 500 ms, and takes the grant up then.
    const waiterClient = client(1_500);
    const got = waiterClient.getReadWriteLock(lockName).writeLock().acquire({ leaseTime: 2_000 });
    await waitFor(async () => (await queue(lockName)).length === 1 && ((await redis.pubsub('CHANNELS', `*${lockName}*`)) as string[]).length > 0, {
      message: 'the waiter queued and subscribed',
    });
    // Right after one of the waiter's heartbeats (its ticket is rewritten), so that its
    // next attempt, which takes the grant up, comes most of a heartbeat after the grant.
    const tickets = `${base(lockName)}:tickets`;
    const ticket = JSON.stringify(await redis.hvals(tickets));
    await waitFor(async () => JSON.stringify(await redis.hvals(tickets)) !== ticket, { interval: 2, message: 'a heartbeat of the waiter' });
    // The grant's message is lost: the subscriber connections are dropped as it goes out.
    await redis.client('KILL', 'TYPE', 'pubsub');
    await holder.release();
    // Granted by the release itself, before the waiter asks again.
    expect(await redis.hlen(base(lockName))).toBe(1);
    // Set once the key's expiry is known; a loss heard before then is heard before it.
    let expiry: ReturnType<typeof timerAt> | undefined;
    const lost = nextEvent<LostEvent>(waiterClient, 'lost', 10_000).then((e) => ({ ...e, afterExpiry: expiry?.passed ?? false }));
    await withTimeout(got, 5_000, 'the waiter took the grant up');
    const asked = performance.now();
    // The key expires no earlier than this; the waiter's client-side deadline must come first.
    const expiresAt = asked + (await redis.pttl(base(lockName)));
    expiry = timerAt(expiresAt);
    const { reason, afterExpiry } = await lost;
    expiry.clear();
    expect(reason).toBe('expired');
    expect(afterExpiry).toBe(false);
  }, 20_000);

  it("an aborted waiter's leave gives back a grant it never took up, and leaves nothing in Redis", async () => {
    const lockName = name();
    const holder = await client(30_000).getReadWriteLock(lockName).writeLock().acquire();
    // The waiter on a connection of its own, which a BLPOP below holds up: its leave
    // reaches Redis only after the release has granted it the read lock.
    const own = new Redis(server.port, '127.0.0.1');
    const waiterClient = new LockClient(own, { watchdogTimeout: 30_000 });
    clients.push(waiterClient);
    const controller = new AbortController();
    const aborted = waiterClient.getReadWriteLock(lockName).readLock().acquire({ signal: controller.signal });
    const before = await scriptCalls();
    await waitFor(async () => (await scriptCalls()) - before >= 2 && (await queue(lockName)).length === 1, { message: 'the reader queued and asleep' });
    const blocked = own.blpop(`${base(lockName)}:unblock`, 0);
    await waitFor(async () => ((await redis.client('LIST')) as string).includes('cmd=blpop'), { message: 'the connection held up' });
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    await holder.release();
    // Granted by the release, never taken up: the wait has ended.
    expect(await redis.hlen(`${base(lockName)}:read`)).toBe(1);
    await redis.lpush(`${base(lockName)}:unblock`, 'go');
    await blocked;
    await waitFor(async () => (await redis.exists(`${base(lockName)}:read`)) === 0, { message: 'the grant went back' });
    expect(await leftovers(lockName)).toEqual([]);
    // And the lock is free for a writer at once.
    const writer = client().getReadWriteLock(lockName).writeLock();
    expect(await writer.tryLock()).toBe(true);
    await writer.unlock();
    await waiterClient.close();
    own.disconnect();
  });
});

describe('arguments and topologies', () => {
  it('rejects bad input with TypeError/RangeError before anything is sent', async () => {
    const locks = client();
    const before = await scriptCalls();
    expect(() => locks.getReadWriteLock(1 as unknown as string)).toThrow(TypeError);
    expect(() => locks.getReadWriteLock('')).toThrow(RangeError);
    const rw = locks.getReadWriteLock(name());
    await expect(rw.readLock().lock(-1)).rejects.toThrow(RangeError);
    await expect(rw.writeLock().lock(50)).rejects.toThrow(/lease/);
    await expect(rw.readLock().tryLock(-5)).rejects.toThrow(RangeError);
    await expect(rw.writeLock().run('x' as never)).rejects.toThrow(TypeError);
    await expect(rw.readLock().acquire({ waitTime: 'soon' } as never)).rejects.toThrow(TypeError);
    expect(await scriptCalls()).toBe(before);
    expect(await redis.keys(`${base(rw.name)}*`)).toEqual([]);
    await locks.close();
    expect(() => locks.getReadWriteLock('x')).toThrow(LockError);
  });

  it('refuses quorum mode and syncReplicas up front with the reason', async () => {
    const masters = await startMasters(3);
    const conns = masters.map((m) => new Redis(m.port, '127.0.0.1'));
    try {
      const quorum = new LockClient(conns);
      clients.push(quorum);
      expect(() => quorum.getReadWriteLock('q')).toThrow(LockError);
      expect(() => quorum.getReadWriteLock('q')).toThrow(/quorum mode/);
      const synced = new LockClient(conn, { syncReplicas: { min: 1, timeout: 100 } });
      clients.push(synced);
      expect(() => synced.getReadWriteLock('s')).toThrow(/syncReplicas/);
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      for (const c of conns) c.disconnect();
      await Promise.all(masters.map((m) => m.stop()));
    }
  });
});
