import Redis, { Cluster, type RedisOptions } from 'ioredis';
import { LockClient, LockTimeoutError, LockUnavailableError, type Connection, type Lock } from '../../lib';
import { clusterSlot } from '../../lib/store/master/slot';
import { rawCommand, startCluster, startMasters, startServer, type RedisServer, type TestCluster } from '../kit/servers';
import { TcpProxy } from '../kit/proxy';
import { closeConnection, lockCluster, lockConnection } from '../helpers/clients';
import { waitFor } from '../helpers/wait';

// DESIGN "Waiting": a wait settles within its waitTime plus one command bound, whatever
// Redis does. Here under the two faults where waits overran it: a Cluster slot migrated
// (the sharded subscriber's SSUBSCRIBE then goes unanswered for its own 2 s bound), and
// quorum mode, where a client's waits of one name ask one at a time (a wait behind
// another of its client's, with a master stalled).

const WATCHDOG = 800;
/** The command bound at that watchdogTimeout (a third of it). */
const BOUND = Math.floor(WATCHDOG / 3);
/** Timers and a loaded machine: the margin a measured settle may take past the bound. */
const SLACK = 150;

const clients: LockClient[] = [];
let n = 0;
const name = () => `budget-${++n}`;

function client(connection: Connection | Connection[]): LockClient {
  const c = new LockClient(connection, { watchdogTimeout: WATCHDOG });
  clients.push(c);
  return c;
}

/** How long the call takes to settle, and with what. */
async function timed(call: () => Promise<unknown>): Promise<{ ms: number; value?: unknown; error?: unknown }> {
  const start = performance.now();
  try {
    const value = await call();
    return { ms: performance.now() - start, value };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

/** Holds `lockName` with `locks` until the returned function is called (resolves once released). */
async function holdUntilFreed(locks: LockClient, lockName: string): Promise<() => Promise<void>> {
  let free!: () => void;
  const freed = new Promise<void>((resolve) => (free = resolve));
  let held!: () => void;
  const isHeld = new Promise<void>((resolve) => (held = resolve));
  const holding = locks.getLock(lockName).run(async () => {
    held();
    await freed;
  });
  await Promise.race([isHeld, holding]);
  return async () => {
    free();
    await holding;
  };
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('Cluster: a slot migrated', () => {
  let cluster: TestCluster;
  let admin: Cluster;
  const conns: Connection[] = [];

  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
    admin = new Redis.Cluster(cluster.startupNodes);
    await admin.ping();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(conns.map(closeConnection));
    admin.disconnect();
    await cluster.stop();
  });

  /** Moves the slot of `lockName` to another node as `redis-cli --cluster reshard` does (MIGRATING/IMPORTING, MIGRATE, SETSLOT NODE everywhere). */
  async function migrate(lockName: string): Promise<void> {
    const slot = clusterSlot(`holdfast:{${lockName}}`);
    const slots = (await admin.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
    const port = slots.find(([from, to]) => slot >= from && slot <= to)![2][1];
    const from = cluster.nodes.findIndex((node) => node.port === port);
    const to = (from + 1) % cluster.nodes.length;
    const [src, dst] = [cluster.nodes[from]!, cluster.nodes[to]!];
    const [srcId, dstId] = await Promise.all([rawCommand(src.port, ['CLUSTER', 'MYID']), rawCommand(dst.port, ['CLUSTER', 'MYID'])]);
    await rawCommand(dst.port, ['CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', srcId]);
    await rawCommand(src.port, ['CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', dstId]);
    const node = new Redis(src.port, '127.0.0.1');
    try {
      for (;;) {
        const keys = (await node.cluster('GETKEYSINSLOT', slot, 100)) as string[];
        if (keys.length === 0) break;
        await node.migrate('127.0.0.1', dst.port, '', 0, 5_000, 'KEYS', ...keys);
      }
    } finally {
      node.disconnect();
    }
    for (const s of [dst, src, ...cluster.nodes.filter((x) => x !== src && x !== dst)]) await rawCommand(s.port, ['CLUSTER', 'SETSLOT', String(slot), 'NODE', dstId]);
  }

  it('a wait for a name whose slot just moved ends within its budget plus one command bound (its subscription does not hold it)', async () => {
    const connect = async () => {
      const c = await lockCluster(cluster.startupNodes);
      conns.push(c);
      return c;
    };
    const holder = client(await connect());
    const waiter = client(await connect());
    // The waiter's sharded subscriber exists (a wait made it) before the slot moves.
    const warm = name();
    const freeWarm = await holdUntilFreed(holder, warm);
    expect(await waiter.getLock(warm).tryLock({ waitTime: 50 })).toBe(false);
    await freeWarm();
    for (let round = 0; round < 2; round++) {
      const lockName = name();
      const free = await holdUntilFreed(holder, lockName);
      await migrate(lockName);
      const waitTime = 300;
      const { ms, value } = await timed(() => waiter.getLock(lockName).tryLock({ waitTime }));
      expect(value).toBe(false);
      expect(ms).toBeLessThan(waitTime + BOUND + SLACK);
      await free();
    }
  }, 30_000);
});

describe('quorum mode, a master stalled', () => {
  let masters: RedisServer[];
  const direct: Redis[] = [];

  beforeAll(async () => {
    masters = await startMasters(3);
    for (const m of masters) direct.push(new Redis(m.port, '127.0.0.1'));
  }, 60_000);
  afterAll(async () => {
    for (const c of direct) c.disconnect();
    await Promise.all(masters.map((m) => m.stop()));
  });

  it("a wait behind another of its client's on the name ends within its own budget plus one command bound", async () => {
    const proxies = await Promise.all(masters.map((m) => TcpProxy.start({ host: '127.0.0.1', port: m.port })));
    const viaProxies = await Promise.all(proxies.map((p) => lockConnection(p.port, { retryDelay: 50 })));
    try {
      const holder = client(direct as unknown as Connection[]);
      const waiter = client(viaProxies);
      const lockName = name();
      const free = await holdUntilFreed(holder, lockName);
      // Scripts loaded and every master's age known before the stall.
      expect(await waiter.getLock(`${lockName}:warm-up`).run(async () => 'held', { waitTime: 1_000 })).toBe('held');
      proxies[0]!.blackhole();
      const first = timed(() => waiter.getLock(lockName).run(async () => 'held', { waitTime: 1_500 }));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const waitTime = 300;
      const second = await timed(() => waiter.getLock(lockName).run(async () => 'held', { waitTime }));
      expect(second.error).toBeInstanceOf(LockTimeoutError);
      expect(second.ms).toBeLessThan(waitTime + BOUND + SLACK);
      expect((await first).error).toBeInstanceOf(LockTimeoutError);
      proxies[0]!.resume();
      await free();
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await Promise.all(viaProxies.map(closeConnection));
      await Promise.all(proxies.map((p) => p.close()));
    }
  }, 30_000);
});

describe('one master', () => {
  let server: RedisServer;
  let admin: Redis;

  beforeAll(async () => {
    server = await startServer();
    admin = new Redis(server.port, '127.0.0.1');
  });
  afterAll(async () => {
    admin.disconnect();
    await server.stop();
  });

  // A grant whose connection broke while it was out may have run twice (ioredis resends
  // it after the reconnect): its level is then set to the client's count (exactly-once.ts
  // rule 2). That check is part of the attempt, so it gets what is left of the attempt's
  // bound, not a bound of its own: unanswered within it, the grant stands as it came.
  describe('a grant that came after a reconnect', () => {
    const BOUND = 1_000;

    /**
     * A client through a proxy, on an ioredis connection whatever the project (its resend,
     * or its rejection, of a call out when the connection breaks is what is under test),
     * scripts loaded; `fn` then runs with both, and everything is closed after it. No ready
     * check nor client info: the resend is the first thing sent on the new connection.
     */
    async function withClient(options: RedisOptions, fn: (proxy: TcpProxy, locks: LockClient) => Promise<void>): Promise<void> {
      const proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
      const conn = new Redis(proxy.port, '127.0.0.1', { retryStrategy: () => 20, enableReadyCheck: false, disableClientInfo: true, ...options });
      conn.on('error', () => undefined);
      const locks = new LockClient(conn, { watchdogTimeout: 5_000, commandTimeout: BOUND });
      try {
        // Scripts loaded: the attempt under test is one EVALSHA.
        expect(await locks.getLock(`${name()}:warm-up`).run(async () => 'held')).toBe('held');
        await fn(proxy, locks);
      } finally {
        await locks.close();
        conn.disconnect();
        await proxy.close();
      }
    }

    /**
     * Starts an attempt of lock's that the server holds back (CLIENT PAUSE of pauseMs),
     * cuts its reply path once the server ran it, then breaks the connection and brings it
     * back slowed by `latency` ms each way.
     */
    async function grantedThenBroken(proxy: TcpProxy, lock: Lock, pauseMs: number, latency: number) {
      await admin.client('PAUSE', pauseMs, 'WRITE');
      const attempt = timed(() => lock.tryLock());
      await waitFor(async () => /blocked_clients:[1-9]/.test(await admin.info('clients')), { timeout: 1_000, interval: 2, message: 'the attempt held back by the pause' });
      proxy.blackhole();
      await waitFor(async () => (await admin.exists(`holdfast:{${lock.name}}`)) === 1, { timeout: 2_000, interval: 5, message: 'the server ran the attempt' });
      proxy.drop();
      proxy.resume();
      proxy.latency(latency);
      return attempt;
    }

    it('settles within one command bound when the level check after it is slow', async () => {
      // Resent after the reconnect: the grant (from a new epoch) comes within the bound
      // (~2 x latency), its level check would take as long again.
      await withClient({}, async (proxy, locks) => {
        const lock = locks.getLock(name());
        const { ms, value, error } = await grantedThenBroken(proxy, lock, 100, 300);
        expect(error).toBeUndefined();
        expect(value).toBe(true);
        expect(ms).toBeLessThan(BOUND + SLACK);
        proxy.latency(0);
        await lock.unlock();
        expect(await admin.exists(`holdfast:{${lock.name}}`)).toBe(0);
      });
    }, 20_000);

    it('settles within one command bound when it failed with its connection and its give-back is slow', async () => {
      // A call in flight is rejected as its connection closes, not resent (as node-redis
      // does, and a Cluster when it gives up on a node): the server may have run it, so its
      // grant is given back. The attempt fails half way through its bound; the give-back
      // then takes ~2 x latency.
      await withClient({ maxRetriesPerRequest: 0 }, async (proxy, locks) => {
        const lock = locks.getLock(name());
        const { ms, error } = await grantedThenBroken(proxy, lock, 500, 400);
        expect(error).toBeInstanceOf(LockUnavailableError);
        expect(ms).toBeLessThan(BOUND + SLACK);
        // The give-back still lands: nothing is left held.
        await waitFor(async () => (await admin.exists(`holdfast:{${lock.name}}`)) === 0, { timeout: 3_000, interval: 10, message: 'the grant given back' });
        proxy.latency(0);
      });
    }, 20_000);
  });

  // A multi-lock asks its names one after another under one budget: its attempts share
  // the one command bound past it, as one wait's would, and what it took goes back at
  // once (every name side by side), within one bound more.
  describe('a multi-lock whose replies are slow', () => {
    it('asks the names left after its budget within one command bound in all, and gives back within one more', async () => {
      const proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
      const slow = await lockConnection(proxy.port);
      // A longer lease than the other cases: holds must outlive round trips of 600 ms.
      const bound = 1_000;
      const locks = new LockClient(slow, { watchdogTimeout: 3 * bound });
      clients.push(locks);
      try {
        const base = name();
        const names = ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => `${base}-${x}`);
        const group = locks.getMultiLock(names);
        // Connected and scripts loaded before the fault.
        expect(await group.tryLock()).toBe(true);
        await group.unlock();
        await locks.scope(async () => {
          // Held by the scope already: the group goes name by name (a reentry first).
          const outer = locks.getLock(names[0]!);
          await outer.lock();
          // Each round trip through the proxy takes about 600 ms, within the bound: every
          // attempt answers in time, but six in turn do not fit in one bound.
          proxy.latency(300);
          const { ms, value, error } = await timed(() => group.tryLock());
          expect(ms).toBeLessThan(2 * bound + SLACK);
          expect(value ?? error).toBeInstanceOf(LockUnavailableError);
          proxy.latency(0);
          // The reentry's level went back: the outer hold is as it was.
          expect(await outer.getHoldCount()).toBe(1);
          await outer.unlock();
        });
        // Nothing of the group is left.
        await waitFor(async () => (await admin.exists(...names.map((n) => `holdfast:{${n}}`))) === 0, { timeout: 3_000, interval: 10, message: 'every name given back' });
      } finally {
        await Promise.all(clients.splice(0).map((c) => c.close()));
        await closeConnection(slow);
        await proxy.close();
      }
    }, 20_000);
  });
});
