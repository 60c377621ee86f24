import Redis from 'ioredis';
import { LockClient, LockError, LockRevokedError, LockLostError, type Connection, type Lock, type LostEvent, type MultiLock, type Permit, type RevokeRequestedEvent } from '../../lib';
import { HOLDER_CHANNEL } from '../../lib/store/scripts/release';
import { startCluster, startMasters, startServer, type RedisServer, type TestCluster } from '../kit/servers';
import { closeConnection, lockCluster, lockConnection } from '../helpers/clients';
import { nextEvent, waitFor, withTimeout } from '../helpers/wait';

// requestRelease and forceUnlock reach the holders at once, on the holder's client
// channel (engine/holder-channel.ts): one master, a Cluster, quorum mode (which takes
// neither the read-write lock nor the semaphore: both are refused there up front).

/** How soon a reachable holder must hear a request or a forced release. */
const BOUND = 500;

interface Topology {
  /** What a LockClient is built over. */
  connection: Connection | Connection[];
  /** Every node a plain SUBSCRIBE may land on (PUBSUB NUMSUB is per node). */
  nodes: Redis[];
}

let n = 0;
const clients: LockClient[] = [];
function client(t: Topology): LockClient {
  const c = new LockClient(t.connection as Connection);
  clients.push(c);
  return c;
}

/** Resolves once the holder's client is subscribed to its holder channel on some node. */
async function listening(t: Topology, owner: string): Promise<void> {
  const channel = HOLDER_CHANNEL + owner.slice(0, owner.lastIndexOf(':') + 1);
  await waitFor(
    async () => {
      const counts = await Promise.all(t.nodes.map((r) => r.pubsub('NUMSUB', channel) as Promise<[string, number]>));
      return counts.some(([, count]) => Number(count) > 0);
    },
    { timeout: 2_000, message: `subscribed to ${channel}` },
  );
}

/**
 * A holder in run(): `aborted` resolves with its signal's reason once aborted; the run
 * goes on holding until finish() (then `done` resolves, released).
 */
function holdInRun(lock: Lock | MultiLock): { started: Promise<void>; aborted: Promise<unknown>; finish: () => Promise<void> } {
  let started!: () => void;
  let aborted!: (reason: unknown) => void;
  let letGo!: () => void;
  const s = new Promise<void>((r) => (started = r));
  const a = new Promise<unknown>((r) => (aborted = r));
  const go = new Promise<void>((r) => (letGo = r));
  const done = lock.run(async ({ signal }) => {
    signal.addEventListener('abort', () => aborted(signal.reason), { once: true });
    started();
    await go;
  });
  return {
    started: s,
    aborted: a,
    finish: () => {
      letGo();
      return done;
    },
  };
}

/** The reason `signal` aborts with. */
function abortOf(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

function behaves(label: string, setup: () => Promise<{ t: Topology; stop: () => Promise<void> }>): void {
  describe(label, () => {
    let t: Topology;
    let stop: () => Promise<void>;
    beforeAll(async () => {
      ({ t, stop } = await setup());
    }, 60_000);
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close()));
    });
    afterAll(async () => {
      await stop();
    });

    const kinds: [string, (c: LockClient, name: string) => Lock][] = [
      ['lock', (c, name) => c.getLock(name)],
      ['fair lock', (c, name) => c.getFairLock(name)],
      ['read lock', (c, name) => c.getReadWriteLock(name).readLock()],
      ['write lock', (c, name) => c.getReadWriteLock(name).writeLock()],
    ];
    for (const [kind, get] of kinds) {
      it(`a ${kind}'s holder is asked to let go: its signal aborts with LockRevokedError, nothing is deleted`, async () => {
        const name = `rv-${++n}`;
        const holder = get(client(t), name);
        const asker = get(client(t), name);
        const events: RevokeRequestedEvent[] = [];
        holder.on('revokeRequested', (e) => events.push(e));
        const run = holdInRun(holder);
        await run.started;
        const { holders } = await asker.inspect();
        await listening(t, holders[0]!.owner);

        const asked = Date.now();
        expect(await asker.requestRelease()).toBe(1);
        const reason = await withTimeout(run.aborted, BOUND, 'the holder hearing the request');
        expect(Date.now() - asked).toBeLessThan(BOUND);
        expect(reason).toBeInstanceOf(LockRevokedError);
        expect(reason).toMatchObject({ code: 'HOLDFAST_REVOKED', reason: 'revoked', lockName: name });
        expect(events).toEqual([expect.objectContaining({ name, owner: holders[0]!.owner, error: reason })]);
        // Nothing deleted: the holder still holds until its run settles.
        expect(await asker.isLocked()).toBe(true);
        await run.finish();
        expect(await asker.isLocked()).toBe(false);
        expect(await asker.requestRelease()).toBe(0);
      });

      it(`a ${kind}'s holder hears a forced release at once: lost (deleted), not at its next renewal`, async () => {
        const name = `rv-${++n}`;
        const holder = get(client(t), name);
        const other = get(client(t), name);
        await holder.lock();
        const { holders } = await other.inspect();
        await listening(t, holders[0]!.owner);
        const lost = nextEvent<LostEvent>(holder, 'lost', BOUND);
        const forced = Date.now();
        expect(await other.forceUnlock()).toBe(true);
        expect(await lost).toMatchObject({ name, reason: 'deleted' });
        expect(Date.now() - forced).toBeLessThan(BOUND);
        await expect(holder.unlock()).rejects.toBeInstanceOf(LockLostError);
      });
    }

    it('two readers are both asked; the write side of the name is not', async () => {
      const name = `rv-${++n}`;
      const readers = [holdInRun(client(t).getReadWriteLock(name).readLock()), holdInRun(client(t).getReadWriteLock(name).readLock())];
      await Promise.all(readers.map((r) => r.started));
      const asker = client(t).getReadWriteLock(name);
      const { holders } = await asker.readLock().inspect();
      expect(holders).toHaveLength(2);
      for (const h of holders) await listening(t, h.owner);
      expect(await asker.writeLock().requestRelease()).toBe(0);
      expect(await asker.readLock().requestRelease()).toBe(2);
      for (const r of readers) expect(await withTimeout(r.aborted, BOUND, 'a reader hearing the request')).toBeInstanceOf(LockRevokedError);
      expect(await asker.readLock().isLocked()).toBe(true);
      await Promise.all(readers.map((r) => r.finish()));
      expect(await asker.readLock().isLocked()).toBe(false);
    });

    it("a semaphore's holders are asked to let go: each permit's signal aborts with LockRevokedError, nothing is deleted", async () => {
      const name = `rv-${++n}`;
      const permits: Permit[] = [];
      const events: RevokeRequestedEvent[] = [];
      for (const permitsWanted of [1, 2]) {
        const sem = client(t).getSemaphore(name, 4).on('revokeRequested', (e) => events.push(e));
        permits.push(await sem.acquire({ permits: permitsWanted }));
      }
      const asker = client(t).getSemaphore(name, 4);
      const info = await asker.inspect();
      expect(info).toMatchObject({ name, limit: 4, used: 3, waiters: 0 });
      expect(info.holders.map((h) => h.id).sort()).toEqual(permits.map((p) => p.id).sort());
      for (const p of permits) await listening(t, p.id);

      const asked = Date.now();
      expect(await asker.requestRelease()).toBe(2);
      const reasons = await Promise.all(permits.map((p) => withTimeout(abortOf(p.signal), BOUND, `permit ${p.id} hearing the request`)));
      expect(Date.now() - asked).toBeLessThan(BOUND);
      for (const [i, reason] of reasons.entries()) {
        expect(reason).toBeInstanceOf(LockRevokedError);
        expect(reason).toMatchObject({ code: 'HOLDFAST_REVOKED', reason: 'revoked', lockName: name, owner: permits[i]!.id });
      }
      expect(events.map((e) => e.owner).sort()).toEqual(permits.map((p) => p.id).sort());
      expect(events.every((e) => e.kind === 'semaphore')).toBe(true);
      // Nothing deleted: the permits are held until released.
      expect(await asker.availablePermits()).toBe(1);
      await Promise.all(permits.map((p) => p.release()));
      expect(await asker.availablePermits()).toBe(4);
      expect(await asker.requestRelease()).toBe(0);
    });

    it("a semaphore's holders hear a forced release at once: lost (deleted); a waiter gets the permits", async () => {
      const name = `rv-${++n}`;
      const sem = client(t).getSemaphore(name, 2);
      const lost = nextEvent<LostEvent>(sem, 'lost', BOUND);
      const held = await sem.acquire({ permits: 2 });
      await listening(t, held.id);
      const waiter = client(t).getSemaphore(name, 2).acquire({ waitTime: 5_000 });
      await waitFor(async () => (await sem.inspect()).waiters === 1, { timeout: 2_000, message: 'the waiter queued' });
      const other = client(t).getSemaphore(name, 2);
      const forced = Date.now();
      expect(await other.forceRelease()).toBe(true);
      expect(await lost).toMatchObject({ name, reason: 'deleted', owner: held.id, kind: 'semaphore' });
      expect(Date.now() - forced).toBeLessThan(BOUND);
      expect(held.signal.reason).toBeInstanceOf(LockLostError);
      await expect(held.release()).rejects.toBeInstanceOf(LockLostError);
      const next = await waiter;
      expect((await other.inspect()).holders.map((h) => h.id)).toEqual([next.id]);
      await next.release();
      expect(await other.forceRelease()).toBe(false);
    });

    it('requestRelease asks each name of a multi-lock holder, and is idempotent', async () => {
      const names = [`rv-${++n}`, `rv-${++n}`];
      const holder = client(t).getMultiLock(names);
      const asker = client(t).getMultiLock(names);
      const run = holdInRun(holder);
      await run.started;
      const info = await client(t).getLock(names[0]!).inspect();
      await listening(t, info.holders[0]!.owner);
      expect(await asker.requestRelease()).toBe(2);
      expect(await withTimeout(run.aborted, BOUND, 'the multi-lock holder hearing the request')).toBeInstanceOf(LockRevokedError);
      expect(await asker.requestRelease()).toBe(2);
      expect(await asker.isLocked()).toBe(true);
      await run.finish();
    });
  });
}

behaves('one master', async () => {
  const server: RedisServer = await startServer();
  const redis = new Redis(server.port, '127.0.0.1');
  const connection = await lockConnection(server.port);
  return {
    t: { connection, nodes: [redis] },
    stop: async () => {
      await closeConnection(connection);
      redis.disconnect();
    },
  };
});

behaves('Cluster', async () => {
  const cluster: TestCluster = await startCluster({ masters: 3 });
  const nodes = cluster.startupNodes.map((node) => new Redis(node.port, node.host));
  const connection = await lockCluster(cluster.startupNodes);
  return {
    t: { connection, nodes },
    stop: async () => {
      await closeConnection(connection);
      nodes.forEach((r) => r.disconnect());
      await cluster.stop();
    },
  };
});

describe('quorum', () => {
  // Quorum mode takes only the lock; the cases above that it supports run here.
  let masters: RedisServer[];
  let nodes: Redis[];
  let connections: Connection[];
  beforeAll(async () => {
    masters = await startMasters(3);
    nodes = masters.map((m) => new Redis(m.port, '127.0.0.1'));
    connections = await Promise.all(masters.map((m) => lockConnection(m.port)));
  }, 60_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await Promise.all(connections.map(closeConnection));
    nodes.forEach((r) => r.disconnect());
  });
  const t = (): Topology => ({ connection: connections, nodes });

  it('asks the holder once though it holds on every master, and deletes nothing', async () => {
    const name = `rv-${++n}`;
    const holder = client(t()).getLock(name);
    const asker = client(t()).getLock(name);
    const run = holdInRun(holder);
    await run.started;
    const { holders } = await asker.inspect();
    await listening(t(), holders[0]!.owner);
    expect(await asker.requestRelease()).toBe(1);
    expect(await withTimeout(run.aborted, BOUND, 'the quorum holder hearing the request')).toBeInstanceOf(LockRevokedError);
    expect(await asker.isLocked()).toBe(true);
    await run.finish();
  });

  it('refuses the read-write lock and the semaphore up front (they have no quorum form), so there is nothing of theirs to ask', () => {
    expect(() => client(t()).getReadWriteLock(`rv-${++n}`)).toThrow(LockError);
    expect(() => client(t()).getSemaphore(`rv-${++n}`, 2)).toThrow(LockError);
  });

  it('a forced release reaches the holder at once', async () => {
    const name = `rv-${++n}`;
    const holder = client(t()).getLock(name);
    const other = client(t()).getLock(name);
    await holder.lock();
    const { holders } = await other.inspect();
    await listening(t(), holders[0]!.owner);
    const lost = nextEvent<LostEvent>(holder, 'lost', BOUND);
    await other.forceUnlock();
    expect(await lost).toMatchObject({ name, reason: 'deleted' });
    await expect(holder.unlock()).rejects.toBeInstanceOf(LockLostError);
  });
});
