import Redis from 'ioredis';
import { LockClient, LockLostError, type Connection } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { closeConnection, lockConnection } from '../helpers/clients';
import { commandCalls } from '../helpers/command-stats';
import { withTimeout } from '../helpers/wait';
import * as sources from '../../lib/primitives/multi/sources';

// A multi-lock whose names share one master takes them in one script call when all are
// free and nobody waits on any, and releases them in one: all or none, tokens and
// reentry per name as when they are taken one at a time.

const WATCHDOG = 600;
let server: RedisServer;
let admin: Redis;
let connection: Connection;
const clients: LockClient[] = [];
let n = 0;
const name = () => `one-${++n}`;
const key = (lockName: string) => `holdfast:{${lockName}}`;
const present = async (...names: string[]) => Promise.all(names.map((x) => admin.exists(key(x))));
const scriptCalls = () => commandCalls(admin, 'evalsha', 'eval');

function client(): LockClient {
  const c = new LockClient(connection, { watchdogTimeout: WATCHDOG });
  clients.push(c);
  return c;
}

/** Script calls the server ran during `fn`. */
async function scriptsDuring(fn: () => Promise<unknown>): Promise<number> {
  const before = await scriptCalls();
  await fn();
  return (await scriptCalls()) - before;
}

beforeAll(async () => {
  server = await startServer();
  admin = new Redis(server.port, '127.0.0.1');
  connection = await lockConnection(server.port);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await closeConnection(connection);
  admin.disconnect();
  await server.stop();
});

it('takes three free names in one script call and releases them in one', async () => {
  const locks = client();
  // Once before counting: the first call of a script the server has not cached is EVALSHA then EVAL.
  const warm = locks.getMultiLock([name(), name()]);
  await warm.lock();
  await warm.unlock();

  const names = [name(), name(), name()];
  const multi = locks.getMultiLock(names);
  expect(await scriptsDuring(() => multi.lock())).toBe(1);
  expect(await present(...names)).toEqual([1, 1, 1]);
  for (const x of names) expect(await admin.pttl(key(x))).toBeGreaterThan(WATCHDOG - 200);
  expect(await scriptsDuring(() => multi.unlock())).toBe(1);
  expect(await present(...names)).toEqual([0, 0, 0]);

  // With a fixed lease: the one call gives every name that lease.
  expect(await scriptsDuring(() => multi.lock(5_000))).toBe(1);
  for (const x of names) expect(await admin.pttl(key(x))).toBeGreaterThan(4_000);
  await multi.unlock();
});

it('the one call takes nothing when one name is busy: no name is written', async () => {
  const [a, b, c] = [name(), name(), name()];
  // The first name in the global order is busy: taken one at a time, the names after it
  // are never tried either, so any key of theirs would be the one call's.
  const other = client().getLock(a);
  await other.lock();
  const multi = client().getMultiLock([c, b, a]);
  expect(await multi.tryLock()).toBe(false);
  expect([...(await admin.keys(`holdfast:{${b}}*`)), ...(await admin.keys(`holdfast:{${c}}*`))]).toEqual([]);
  await other.unlock();
  expect(await multi.tryLock()).toBe(true);
  expect(await present(a, b, c)).toEqual([1, 1, 1]);
  await multi.unlock();
});

it('hands out the token each name was granted, above the last one', async () => {
  const [a, b] = [name(), name()];
  const locks = client();
  const first = await locks.getMultiLock([a, b]).run(({ tokens }) => ({ ...tokens }));
  const single = await locks.getLock(b).run(({ token }) => token);
  const second = await locks.getMultiLock([b, a]).run(async ({ tokens }) => {
    expect(tokens[a]).toBe(Number(await admin.get(`${key(a)}:fence`)));
    expect(tokens[b]).toBe(Number(await admin.get(`${key(b)}:fence`)));
    return { ...tokens };
  });
  expect(second[a]).toBeGreaterThan(first[a]);
  expect(second[b]).toBeGreaterThan(single);
  expect(single).toBeGreaterThan(first[b]);
});

it('reenters a name the scope holds, keeping its token, and gives back one level of each', async () => {
  const [a, b] = [name(), name()];
  const locks = client();
  await locks.scope(async () => {
    const outer = await locks.getLock(a).acquire();
    const multi = locks.getMultiLock([a, b]);
    await multi.run(async ({ tokens }) => {
      expect(tokens[a]).toBe(outer.token);
      expect(await admin.hvals(key(a))).toEqual(['2']);
      expect(await admin.hvals(key(b))).toEqual(['1']);
      // Reentered as a whole: every name one level up, then down again.
      await multi.lock();
      expect(await multi.getHoldCount()).toBe(2);
      await multi.unlock();
    });
    expect(await admin.hvals(key(a))).toEqual(['1']);
    expect(await present(b)).toEqual([0]);
    await outer.release();
  });
  expect(await present(a, b)).toEqual([0, 0]);
});

it('a release in one call still grants a waiter queued on one of the names', async () => {
  const [a, b] = [name(), name()];
  const multi = client().getMultiLock([a, b]);
  await multi.lock();
  const waiter = client().getLock(b);
  const waiting = waiter.lock();
  // Queued in Redis before the release.
  await withTimeout(
    (async () => {
      while ((await admin.llen(`${key(b)}:queue`)) === 0) await new Promise((r) => setTimeout(r, 5));
    })(),
    2_000,
    'the waiter queued on b',
  );
  await multi.unlock();
  await withTimeout(waiting, 2_000, 'the waiter granted b');
  expect(await present(a, b)).toEqual([0, 1]);
  await waiter.unlock();
});

it('a name deleted while held makes the one-call release reject with its loss, and frees the other', async () => {
  const [a, b] = [name(), name()];
  const multi = client().getMultiLock([a, b]);
  await multi.lock();
  await admin.del(key(a));
  await expect(multi.unlock()).rejects.toBeInstanceOf(LockLostError);
  expect(await present(a, b)).toEqual([0, 0]);
});

it('the one call run twice (a resend after a reconnect) answers as the first run did, at one level', async () => {
  const [a, b] = [name(), name()];
  const keys = [a, b].flatMap((x) => [key(x), `${key(x)}:fence`, `${key(x)}:queue`, `${key(x)}:tickets`]);
  const take = () => admin.eval(sources.multiTake, keys.length, ...keys, 'host:1:c:s1', 5_000) as Promise<number[]>;
  const first = await take();
  const second = await take();
  expect(first[0]).toBe(1);
  expect(second[0]).toBe(1);
  expect(await admin.hgetall(key(a))).toEqual({ 'host:1:c:s1': '1' });
  expect(await admin.hgetall(key(b))).toEqual({ 'host:1:c:s1': '1' });
  // Another owner is still refused, and takes nothing.
  const other = (await admin.eval(sources.multiTake, keys.length, ...keys, 'host:1:c:s2', 5_000)) as number[];
  expect(other).toEqual([0]);
  await admin.del(key(a), key(b));
});
