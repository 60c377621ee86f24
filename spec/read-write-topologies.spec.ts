import Redis, { Cluster } from 'ioredis';
import { LockClient } from '../lib';
import { startCluster, type TestCluster } from '../scripts/servers';
import { waitFor } from './helpers/wait';

// getReadWriteLock on a real Redis Cluster: every key of a name shares its hash tag, so
// each script runs on the one master of that slot; waiters are woken by sharded pub/sub.
// (Quorum mode and syncReplicas are refused: read-write-lock.spec.ts.)

const base = (lockName: string) => `holdfast:{${lockName}}`;

describe('read-write lock on a Redis Cluster', () => {
  let cluster: TestCluster;
  let redis: Cluster;
  const clients: LockClient[] = [];
  const client = () => {
    const c = new LockClient(redis, { watchdogTimeout: 600 });
    clients.push(c);
    return c;
  };

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

  it('shares reads, excludes a writer, wakes waiters across clients, and leaves nothing behind', async () => {
    // Names on several masters: each must work wherever its slot lives.
    for (const lockName of ['doc:1', 'doc:2', 'doc:3', 'doc:4']) {
      const [a, b] = [client().getReadWriteLock(lockName), client().getReadWriteLock(lockName)];
      await a.readLock().lock();
      await b.readLock().lock();
      expect((await a.readLock().inspect()).holders).toHaveLength(2);
      const writing = b.writeLock().tryLock(5_000);
      await waitFor(async () => (await a.readLock().inspect()).waiters === 1, { message: 'the writer queued' });
      // Behind the waiting writer, a new reader of another owner waits too.
      const c = client().getReadWriteLock(lockName);
      const reading = c.readLock().tryLock(5_000);
      await waitFor(async () => (await a.readLock().inspect()).waiters === 2, { message: 'the reader queued' });
      await a.readLock().unlock();
      await b.readLock().unlock();
      expect(await writing).toBe(true);
      const token = await b.writeLock().inspect();
      await b.writeLock().unlock();
      expect(await reading).toBe(true);
      expect((await a.readLock().inspect()).token).toBe(token.token);
      await c.readLock().unlock();
      const left = [];
      for (const suffix of ['', ':read', ':readers', ':queue', ':deadlines']) left.push(await redis.exists(`${base(lockName)}${suffix}`));
      expect(left).toEqual([0, 0, 0, 0, 0]);
    }
  }, 30_000);

  it('renews read holds with the watchdog on their own master', async () => {
    const locks = client();
    const rw = locks.getReadWriteLock('renewed:1');
    let renewals = 0;
    locks.on('renewed', (e) => e.kind === 'read' && (renewals += 1));
    await rw.readLock().lock();
    await waitFor(() => renewals >= 3, { timeout: 3_000, message: 'three renewals' });
    expect(await rw.readLock().isLocked()).toBe(true);
    await rw.readLock().unlock();
    expect(await redis.exists(`${base(rw.name)}:read`)).toBe(0);
  });
});
