import Redis, { Cluster } from 'ioredis';
import { LockClient, LockTimeoutError, type AcquiredEvent } from '../../lib';
import { startCluster, startMasters, type RedisServer, type TestCluster } from '../kit/servers';
import { contend } from '../helpers/contention';
import { nextEvent, waitFor, withTimeout } from '../helpers/wait';

// getMultiLock where the names live apart: on different masters of a real Cluster
// (node-redlock #64: a multi-resource lock fails there with CROSSSLOT), and in quorum
// mode, where each name is a quorum lock of its own.

const WATCHDOG = 600;
const key = (lockName: string) => `holdfast:{${lockName}}`;
const LEASE = 1_000;

/**
 * Takes `names` with a fixed lease while another client holds the last of them (in the
 * global order) until 700 ms after the one before it was taken, so the first names'
 * leases would have run out; returns the held names, to check their TTLs.
 */
async function takeWhileLastBusy(owner: LockClient, other: LockClient, names: readonly string[]) {
  const sorted = [...names].sort();
  const busy = other.getLock(sorted[sorted.length - 1]);
  await busy.lock(20_000);
  const acquired = nextEvent<AcquiredEvent>(owner.getLock(sorted[sorted.length - 2]), 'acquired', 2_000);
  const pending = owner.getMultiLock(names).acquire({ waitTime: 8_000, leaseTime: LEASE });
  await acquired;
  const free = setTimeout(() => void busy.unlock(), 700);
  try {
    return await withTimeout(pending, 5_000, 'the multi-lock waiting for its last name');
  } finally {
    clearTimeout(free);
  }
}

describe('on a Redis Cluster', () => {
  let cluster: TestCluster;
  let redis: Cluster;
  const clients: LockClient[] = [];
  const client = () => {
    const c = new LockClient(redis, { watchdogTimeout: WATCHDOG });
    clients.push(c);
    return c;
  };

  /** The master port serving a name's slot. */
  async function masterOf(lockName: string): Promise<number> {
    const slot = Number(await redis.cluster('KEYSLOT', key(lockName)));
    const slots = (await redis.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
    return slots.find(([from, to]) => slot >= from && slot <= to)![2][1];
  }

  /** Three names served by three different masters. */
  async function spreadNames(prefix: string): Promise<string[]> {
    const byMaster = new Map<number, string>();
    for (let i = 0; byMaster.size < 3; i++) {
      const candidate = `${prefix}-${i}`;
      const port = await masterOf(candidate);
      if (!byMaster.has(port)) byMaster.set(port, candidate);
    }
    return [...byMaster.values()];
  }

  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
    redis = new Redis.Cluster(cluster.startupNodes);
    await redis.ping();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    redis.disconnect();
    await cluster.stop();
  });

  it('holds names on three masters together, with a token each, and leaves nothing behind', async () => {
    const names = await spreadNames('spread');
    const multi = client().getMultiLock(names);
    const tokens = await multi.run(async ({ tokens }) => {
      expect(await Promise.all(names.map((x) => redis.exists(key(x))))).toEqual([1, 1, 1]);
      return tokens;
    });
    expect(names.map((x) => typeof tokens[x])).toEqual(['number', 'number', 'number']);
    expect(await Promise.all(names.map((x) => redis.exists(key(x))))).toEqual([0, 0, 0]);
  });

  it('is all or nothing across masters', async () => {
    const names = await spreadNames('aon');
    const other = client().getLock(names[1]);
    await other.lock(20_000);
    await expect(client().getMultiLock(names).run(async () => undefined, { waitTime: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    await waitFor(async () => (await redis.exists(key(names[0]))) + (await redis.exists(key(names[2]))) === 0, { message: 'the other names given back' });
    await other.unlock();
  });

  it('re-leases the names taken early on their own masters once the last is held', async () => {
    const names = await spreadNames('relet');
    const held = await takeWhileLastBusy(client(), client(), names);
    const ttls = await Promise.all(names.map((x) => redis.pttl(key(x))));
    await held.release();
    for (const ttl of ttls) expect(ttl).toBeGreaterThan(0.8 * LEASE);
    expect(await Promise.all(names.map((x) => redis.exists(key(x))))).toEqual([0, 0, 0]);
  });

  it('opposite orders from two clients never deadlock or overlap', async () => {
    const names = await spreadNames('contend');
    const pool = [client(), client()];
    const orders = [names, [...names].reverse(), [names[2], names[0]], [names[1], names[0]]];
    const result = await withTimeout(
      contend(4, 4, (task, body) => pool[task % 2].getMultiLock(orders[task]).run(body)),
      20_000,
      'overlapping multi-locks on a Cluster',
    );
    expect(result).toEqual({ maxInside: 1, sections: 16 });
  });
});

describe('in quorum mode', () => {
  let masters: RedisServer[];
  let conns: Redis[];
  const clients: LockClient[] = [];
  const client = () => {
    const c = new LockClient(conns, { watchdogTimeout: WATCHDOG });
    clients.push(c);
    return c;
  };
  const everywhere = (lockName: string) => Promise.all(conns.map((c) => c.exists(key(lockName))));

  beforeAll(async () => {
    masters = await startMasters(3);
    conns = masters.map((m) => new Redis(m.port, '127.0.0.1'));
    // A master up for less than a second counts as just restarted and sits out.
    await waitFor(async () => (await Promise.all(conns.map((c) => c.info('server')))).every((i) => Number(/uptime_in_seconds:(\d+)/.exec(i)?.[1]) >= 2), {
      timeout: 5_000,
      message: 'masters up for more than a second',
    });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    conns.forEach((c) => c.disconnect());
    await Promise.all(masters.map((m) => m.stop()));
  });

  it('takes each name on a majority, all or nothing, and leaves nothing on any master', async () => {
    const [a, b] = ['q-a', 'q-b'];
    const multi = client().getMultiLock([b, a]);
    await multi.run(async ({ tokens }) => {
      expect(Object.keys(tokens).sort()).toEqual([a, b]);
      expect(await everywhere(a)).toEqual([1, 1, 1]);
      expect(await everywhere(b)).toEqual([1, 1, 1]);
    });
    const other = client().getLock(b);
    await other.lock(20_000);
    expect(await client().getMultiLock([a, b]).tryLock(200)).toBe(false);
    await other.unlock();
    expect(await everywhere(a)).toEqual([0, 0, 0]);
    expect(await everywhere(b)).toEqual([0, 0, 0]);
  });

  it('re-leases the names taken early on every master once the last is held', async () => {
    const names = ['q-r1', 'q-r2', 'q-r3'];
    const held = await takeWhileLastBusy(client(), client(), names);
    const ttls = await Promise.all(names.flatMap((x) => conns.map((c) => c.pttl(key(x)))));
    await held.release();
    for (const ttl of ttls) expect(ttl).toBeGreaterThan(0.8 * LEASE);
    for (const x of names) expect(await everywhere(x)).toEqual([0, 0, 0]);
  });
});
