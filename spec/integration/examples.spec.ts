import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { LockClient, LockLostError } from '../../lib';
import { HOLDER_CHANNEL } from '../../lib/store/scripts/release';
import { startMasters, startServer, type RedisServer } from '../kit/servers';
import { transfer } from '../../examples/await-using';
import { runUnlessBusy } from '../../examples/errors';
import { glideLocks, ioredisLocks, iovalkeyLocks, nodeRedisLocks } from '../../examples/clients';
import { watchLocks } from '../../examples/events';
import { FencedStore, saveProfile } from '../../examples/fencing';
import { lockScope, orderService } from '../../examples/nested-services';
import { documents } from '../../examples/read-write';
import { reportQuota } from '../../examples/semaphore-inspect';
import { quorumLocks } from '../../examples/topologies';
import { quickStart } from '../../examples/quick-start';
import { nightlyReport } from '../../examples/try-lock';
import { waitFor } from '../helpers/wait';

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
  // The README and its guides (docs/guides/*.md) quote them.
  const guides = path.resolve(__dirname, '..', '..', 'docs', 'guides');
  const readme = ['README.md', ...fs.readdirSync(guides).map((f) => path.join('docs', 'guides', f))].map((f) => fs.readFileSync(path.resolve(__dirname, '..', '..', f), 'utf8')).join('\n');
  const dir = path.resolve(__dirname, '..', '..', 'examples');
  it.each(fs.readdirSync(dir).filter((f) => f.endsWith('.ts')))('quotes examples/%s verbatim', (file) => {
    const source = fs.readFileSync(path.join(dir, file), 'utf8');
    const region = /\/\/ #region example\n([\s\S]*?)\/\/ #endregion example/.exec(source);
    expect(region).not.toBeNull();
    expect(readme).toContain(region![1].trim());
  });

  // What runs no spec can show: set-up lines whose connections name the default port or
  // Sentinel hosts, and the one-line-per-method summary. docs.spec type-checks them.
  const typeCheckedOnly = [
    "docs/guides/leases-and-replicas.md: const redis = new Redis({ sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26379 }], name: 'mymaster' });",
    'docs/guides/locks.md: await lock.lock(); // no lease: the watchdog renews it until unlock()',
    "docs/guides/ownership.md: import { Redis } from 'ioredis';",
  ];
  it('runs every snippet of the README and the guides: each quotes an examples/ file, bar the set-up lines listed', () => {
    const regions = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => /\/\/ #region example\n([\s\S]*?)\/\/ #endregion example/.exec(fs.readFileSync(path.join(dir, f), 'utf8'))?.[1]?.trim())
      .filter((r): r is string => r !== undefined);
    const standalone = ['README.md', ...fs.readdirSync(guides).filter((f) => f.endsWith('.md')).map((f) => `docs/guides/${f}`)].flatMap((page) =>
      [...fs.readFileSync(path.resolve(__dirname, '..', '..', page), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)]
        .filter((m) => !regions.some((r) => m[1]!.includes(r)))
        .map((m) => `${page}: ${m[1]!.split('\n')[0]!.trim().replace(/\s+/g, ' ')}`),
    );
    expect(standalone).toEqual(typeCheckedOnly);
  });
});

// The cluster and Sentinel examples are type-checked here; their behaviour is what
// cluster.spec (project node-redis) and sentinel.spec test.
it.each([
  ['ioredis', ioredisLocks],
  ['iovalkey', iovalkeyLocks],
  ['node-redis', nodeRedisLocks],
  ['glide', glideLocks],
] as const)('locks through %s as the client example shows, and closes', async (_kind, make) => {
  const { locks: mine, close } = await make(`redis://127.0.0.1:${server.port}`);
  const lock = mine.getLock('clients-example');
  expect(await lock.tryLock()).toBe(true);
  expect(await redis.exists('holdfast:{clients-example}')).toBe(1);
  await lock.unlock();
  await close();
  expect(await redis.exists('holdfast:{clients-example}')).toBe(0);
});

// The example says "ioredis 5 or 6" and "node-redis 5 or 6": the versions these specs
// do not install under those names run it too, as the project's 'ioredis' or 'redis'.
it.each([
  ['ioredis 6', 'ioredis', 'ioredis6', 'ioredisLocks'],
  ['node-redis 5', 'redis', 'redis5', 'nodeRedisLocks'],
] as const)('locks through %s as the client example shows, and closes', async (_label, name, installed, example) => {
  let make: ((url: string) => ReturnType<typeof ioredisLocks> | ReturnType<typeof nodeRedisLocks>) | undefined;
  let served = false;
  jest.isolateModules(() => {
    jest.doMock(name, () => ((served = true), jest.requireActual(installed)));
    jest.doMock('@valkey/valkey-glide', () => ({})); // not this test's: its native binding loads once per process
    make = (require('../../examples/clients') as typeof import('../../examples/clients'))[example];
  });
  expect(served).toBe(true);
  expect((jest.requireActual(`${installed}/package.json`) as { version: string }).version).toMatch(name === 'ioredis' ? /^6\./ : /^5\./);
  const { locks: mine, close } = await make!(`redis://127.0.0.1:${server.port}`);
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

it('the cron example runs the job once per round on four hosts, also for a host that starts after it ended', async () => {
  const hosts = [locks, ...Array.from({ length: 3 }, () => new LockClient(redis))];
  let runs = 0;
  const job = async () => {
    runs += 1;
    await new Promise((resolve) => setTimeout(resolve, 500));
  };
  // The four hosts start within 150 ms of each other, as cron starts them.
  const outcomes = await Promise.all(hosts.map((host, i) => new Promise((resolve) => setTimeout(resolve, i * 50)).then(() => nightlyReport(host, job))));
  expect(outcomes.filter((o) => o === 'ran')).toHaveLength(1);
  expect(runs).toBe(1);
  // A host that starts after the job ended still finds the round taken.
  expect(await nightlyReport(hosts[1], job)).toBe('skipped');
  expect(await redis.pttl('holdfast:{jobs:nightly-report}')).toBeGreaterThan(3_500_000);
  // A failed run gives the round back: the next host runs it.
  await redis.del('holdfast:{jobs:nightly-report}');
  await expect(nightlyReport(hosts[2], () => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full');
  expect(await nightlyReport(hosts[3], job)).toBe('ran');
  await redis.del('holdfast:{jobs:nightly-report}');
  await Promise.all(hosts.slice(1).map((h) => h.close()));
});

it('the quick start takes a lock, reenters it, and releases it', async () => {
  const tokens: number[] = [];
  await quickStart(locks, async (token) => {
    tokens.push(token);
    expect(await redis.hget('holdfast:{order:42}', Object.keys(await redis.hgetall('holdfast:{order:42}'))[0])).toBe('2');
  });
  expect(tokens).toHaveLength(1);
  expect(tokens[0]).toBeGreaterThan(0);
  expect(locks.listenerCount('lost')).toBe(1);
  expect(await redis.exists('holdfast:{order:42}')).toBe(0);
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

it('the semaphore example keeps at most 10 permits in use, batches taking 2', async () => {
  const { callQuota } = await import('../../examples/semaphore');
  let inUse = 0;
  let most = 0;
  const call = (permits: number) => async () => {
    inUse += permits;
    most = Math.max(most, inUse);
    await new Promise((resolve) => setTimeout(resolve, 5));
    inUse -= permits;
    return permits;
  };
  const results = await Promise.all(Array.from({ length: 30 }, (_, i) => callQuota(locks, call(i % 3 === 0 ? 2 : 1), i % 3 === 0)));
  expect(results.reduce((a, b) => a + b, 0)).toBe(40);
  expect(most).toBeGreaterThan(1);
  expect(most).toBeLessThanOrEqual(10);
  expect(await redis.keys('holdfast:{api:quota}*')).toEqual([]);
});

it('read-write: readers share, an edit writes alone with a rising token, then reads on while others read too', async () => {
  const texts = new Map([['7', 'v0']]);
  const tokens: number[] = [];
  let reading = 0;
  let readDuringIndex = false;
  let editing = 0;
  let editsAtOnce = 0;
  const store = {
    load: async (id: string) => {
      reading += 1;
      await new Promise((r) => setTimeout(r, 5));
      reading -= 1;
      return texts.get(id)!;
    },
    save: async (id: string, text: string, token: number) => {
      if (tokens.length > 0 && token <= tokens[tokens.length - 1]!) throw new Error('stale token');
      if (reading > 1) throw new Error('a reader was in during the write');
      tokens.push(token);
      texts.set(id, text);
    },
    // Downgraded: a plain read gets in while the edit still indexes.
    index: async () => {
      editsAtOnce = Math.max(editsAtOnce, ++editing);
      // Bounded, and the bound's timer cleared: a pending 2 s timer kept the jest worker
      // from exiting when this file ran last in it.
      let bound: NodeJS.Timeout | undefined;
      const timedOut = new Promise<false>((r) => (bound = setTimeout(() => r(false), 2_000)));
      readDuringIndex ||= await Promise.race([docs.read('7').then(() => true as const), timedOut]);
      clearTimeout(bound);
      editing -= 1;
    },
  };
  const docs = documents(locks, store);
  const results = await Promise.all([docs.edit('7', (t) => `${t}+a`), docs.read('7'), docs.edit('7', (t) => `${t}+b`), docs.read('7')]);
  expect(texts.get('7')).toMatch(/^v0\+[ab]\+[ab]$/);
  expect(tokens).toHaveLength(2);
  expect(readDuringIndex).toBe(true);
  expect(editsAtOnce).toBe(1);
  expect(results[1]).toMatch(/^v0/);
});

it('the semaphore inspect example prints who holds permits and asks them to let go', async () => {
  const lines: string[] = [];
  const print = jest.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
  const other = new LockClient(redis);
  try {
    const permit = await other.getSemaphore('api:quota', 10).acquire({ permits: 2 });
    // A request to let go is a pub/sub message: the holder hears it once subscribed.
    const channel = HOLDER_CHANNEL + permit.id.slice(0, permit.id.lastIndexOf(':') + 1);
    await waitFor(async () => Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]) > 0, { timeout: 2_000, message: 'the holder subscribed' });
    await reportQuota(locks);
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^2/10 permits held by \\S+ pid ${process.pid}; 0 waiting$`)), 'asked 1 holders to let go']);
    await waitFor(() => permit.signal.aborted, { timeout: 2_000, message: "the holder's signal aborted" });
    await permit.release();
    expect(await redis.keys('holdfast:{api:quota}*')).toEqual([]);
  } finally {
    print.mockRestore();
    await other.close();
  }
});

it('the error example answers busy on a held lock, runs the work on a free one, and logs an unreachable Redis with its code', async () => {
  const other = new LockClient(redis);
  const logged: unknown[][] = [];
  const log = (...args: unknown[]) => void logged.push(args);
  let ran = 0;
  const work = async () => void (ran += 1);
  try {
    const held = await other.getLock('errors-example').acquire();
    expect(await runUnlessBusy(locks.getLock('errors-example'), work, log, 100)).toBe('busy');
    await held.release();
    expect(await runUnlessBusy(locks.getLock('errors-example'), work, log, 100)).toBe('done');
    expect(ran).toBe(1);
    expect(logged).toEqual([]);
    // A Redis that cannot be reached: ioredis without its offline queue fails each call at once.
    const gone = await startServer();
    const dead = new Redis(gone.port, '127.0.0.1', { enableOfflineQueue: false, retryStrategy: () => null, lazyConnect: true });
    dead.on('error', () => undefined);
    await gone.stop();
    const deadLocks = new LockClient(dead);
    try {
      await expect(runUnlessBusy(deadLocks.getLock('errors-example'), work, log, 100)).rejects.toMatchObject({ code: 'HOLDFAST_UNAVAILABLE' });
      expect(logged).toEqual([['HOLDFAST_UNAVAILABLE', expect.anything()]]);
      expect(ran).toBe(1);
    } finally {
      await deadLocks.close();
      dead.disconnect();
    }
  } finally {
    await other.close();
  }
});
