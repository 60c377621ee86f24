import { hostname } from 'node:os';
import Redis from 'ioredis';
import { LockClient, type Connection } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { closeConnection, lockConnection } from '../helpers/clients';
import { waitFor } from '../helpers/wait';

// lock.inspect(): who holds a lock (owner ids carry host and pid), its TTL, the last
// token and the known waiters.

let server: RedisServer;
/** Admin connection (ioredis); the lock's own is `conn`, of the kind under test (helpers/clients). */
let redis: Redis;
let conn: Connection;
let locks: LockClient;
let other: LockClient;
let n = 0;
const name = () => `inspect-${++n}`;

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
  conn = await lockConnection(server.port);
});
afterAll(async () => {
  redis.disconnect();
  await closeConnection(conn);
  await server.stop();
});
beforeEach(() => {
  locks = new LockClient(conn);
  other = new LockClient(conn);
});
afterEach(async () => {
  await locks.close();
  await other.close();
});

it('shows the holder with its host, pid and levels, the TTL and the token', async () => {
  const lock = locks.getLock(name());
  expect(await lock.inspect()).toEqual({ name: lock.name, locked: false, ttl: -2, token: null, holders: [], waiters: 0 });
  await locks.scope(async () => {
    await lock.lock();
    await lock.lock();
    const info = await lock.inspect();
    expect(info).toMatchObject({ name: lock.name, locked: true, waiters: 0, token: expect.any(Number) });
    expect(info.ttl).toBeGreaterThan(25_000);
    expect(info.holders).toEqual([{ owner: expect.stringMatching(new RegExp(`^${hostname().replace(/[:\s]/g, '_')}:${process.pid}:${locks.id}:`)), host: hostname().replace(/[:\s]/g, '_'), pid: process.pid, count: 2 }]);
    // The owner id is the field Redis holds.
    expect(Object.keys(await redis.hgetall(`holdfast:{${lock.name}}`))).toEqual([info.holders[0].owner]);
    await lock.unlock();
    await lock.unlock();
  });
  const after = await lock.inspect();
  expect(after).toMatchObject({ locked: false, ttl: -2, holders: [] });
  expect(after.token).toBeGreaterThan(0); // the last token minted stays known
});

it('counts the fair lock\'s queued waiters', async () => {
  const lockName = name();
  const held = locks.getFairLock(lockName);
  await held.lock();
  const waiting = other.getFairLock(lockName).tryLock(5_000);
  await waitFor(async () => (await held.inspect()).waiters === 1, { timeout: 2_000, message: 'one waiter queued' });
  await held.unlock();
  expect(await waiting).toBe(true);
  expect((await held.inspect()).waiters).toBe(0);
});
