import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { LockClient, LockLostError } from '../lib';
import { startMasters, startServer, type RedisServer } from '../scripts/servers';
import { transfer } from '../examples/await-using';
import { ioredisLocks, iovalkeyLocks, nodeRedisLocks } from '../examples/clients';
import { watchLocks } from '../examples/events';
import { FencedStore, saveProfile } from '../examples/fencing';
import { lockScope, orderService } from '../examples/nested-services';
import { quorumLocks } from '../examples/topologies';
import { nightlyReport } from '../examples/try-lock';
import { waitFor } from './helpers/wait';

// The README's examples live in examples/ and run here against real servers; the
// README must quote each of them verbatim, so neither can drift from the other.

let server: RedisServer;
let redis: Redis;
let locks: LockClient;

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
});
beforeEach(() => {
  locks = new LockClient(redis, { watchdogTimeout: 600 });
});
afterEach(() => locks.close());
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

describe('README', () => {
  const readme = fs.readFileSync(path.resolve(__dirname, '..', 'README.md'), 'utf8');
  const dir = path.resolve(__dirname, '..', 'examples');
  it.each(fs.readdirSync(dir).filter((f) => f.endsWith('.ts')))('quotes examples/%s verbatim', (file) => {
    const source = fs.readFileSync(path.join(dir, file), 'utf8');
    const region = /\/\/ #region example\n([\s\S]*?)\/\/ #endregion example/.exec(source);
    expect(region).not.toBeNull();
    expect(readme).toContain(region![1].trim());
  });
});

// The cluster and Sentinel examples are type-checked here; their behaviour is what
// cluster.spec (project node-redis) and sentinel.spec test.
it.each([
  ['ioredis', ioredisLocks],
  ['iovalkey', iovalkeyLocks],
  ['node-redis', nodeRedisLocks],
] as const)('locks through %s as the client example shows, and closes', async (_kind, make) => {
  const { locks: mine, close } = await make(`redis://127.0.0.1:${server.port}`);
  const lock = mine.getLock('clients-example');
  expect(await lock.tryLock()).toBe(true);
  expect(await redis.exists('holdfast:{clients-example}')).toBe(1);
  await lock.unlock();
  await close();
  expect(await redis.exists('holdfast:{clients-example}')).toBe(0);
});

it('nested service methods reenter, and concurrent requests exclude each other', async () => {
  const stock = new Map([['42', 10]]);
  const { placeOrder } = orderService(locks, stock);
  const middleware = lockScope(locks);
  let holders = 0;
  let most = 0;
  let acquisitions = 0;
  locks.on('acquired', () => {
    acquisitions += 1;
    most = Math.max(most, ++holders);
  });
  locks.on('released', () => (holders -= 1));
  await Promise.all(Array.from({ length: 5 }, () => middleware(null, null, () => placeOrder('42'))));
  // One acquisition per request (the inner lock() reentered), never two holders at once.
  expect({ acquisitions, most }).toEqual({ acquisitions: 5, most: 1 });
  expect(stock.get('42')).toBe(5);
  expect(await redis.exists('holdfast:{order:42}')).toBe(0);
});

it('tryLock(wait, lease): one host runs the job, the others skip', async () => {
  const other = new LockClient(redis);
  let release: () => void = () => undefined;
  const running = nightlyReport(locks, () => new Promise<void>((r) => (release = r)));
  await waitFor(async () => (await redis.exists('holdfast:{jobs:nightly-report}')) === 1);
  const pttl = await redis.pttl('holdfast:{jobs:nightly-report}');
  expect(pttl).toBeGreaterThan(59_000);
  const skipped = nightlyReport(other, async () => undefined);
  expect(await skipped).toBe('skipped');
  release();
  expect(await running).toBe('ran');
  await other.close();
});

it('run() passes a fencing token the store checks, and a stale token is refused', async () => {
  const store = new FencedStore();
  await saveProfile(locks, store, 'a');
  await saveProfile(locks, store, 'b');
  expect(store.values).toEqual(['A', 'B']);
  expect(() => store.write('late', 1)).toThrow(/stale token/);
});

it('await using releases the lock at the end of the block', async () => {
  const balances = new Map([
    ['alice', 10],
    ['bob', 0],
  ]);
  const token = await transfer(locks, balances, 'alice', 'bob', 3);
  expect(token).toBeGreaterThan(0);
  expect(balances).toEqual(new Map([['alice', 7], ['bob', 3]]));
  expect(await redis.exists('holdfast:{account:alice}')).toBe(0);
});

it('renewalFailed and lost reach the log', async () => {
  const lines: string[] = [];
  watchLocks(locks, { warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) });
  const lock = locks.getLock('watched');
  await lock.lock();
  await redis.del('holdfast:{watched}');
  await waitFor(() => lines.some((l) => l.startsWith('error lost watched: deleted')), { timeout: 1_000 });
  await expect(lock.unlock()).rejects.toBeInstanceOf(LockLostError);
});

it('quorum set-up takes a majority of independent masters', async () => {
  const masters = await startMasters(3);
  const quorum = quorumLocks(masters.map((m) => m.url));
  try {
    await quorum.locks.getLock('q').run(async ({ token }) => expect(token).toBeGreaterThan(0));
  } finally {
    await quorum.close();
    await Promise.all(masters.map((m) => m.stop()));
  }
});
