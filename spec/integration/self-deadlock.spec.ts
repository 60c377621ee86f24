import vm from 'node:vm';
import Redis from 'ioredis';
import { LockClient, LockError } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { orderService } from '../../examples/nested-services';
import { waitFor } from '../helpers/wait';

// DESIGN.md "Ownership" (v2): a nested lock() outside every scope that waits on a hold
// its own call chain took must not hang without a word. holdfast cannot tell that
// chain from an independent task (see lib/engine/self-deadlock.ts), so it warns once
// per name within a second; independent tasks still simply wait for each other.

/** The real process: the `process` a spec sees is a copy whose events Node never emits. */
const hostProcess = vm.runInThisContext('process') as NodeJS.Process;

let server: RedisServer;
let redis: Redis;
let locks: LockClient;
let n = 0;
const id = () => `sd-${++n}`;
let warnings: { at: number; warning: Error & { code?: string } }[] = [];
const onWarning = (warning: Error & { code?: string }) => {
  if (warning.code === 'HOLDFAST_SELF_DEADLOCK') warnings.push({ at: performance.now(), warning });
};

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});
beforeEach(() => {
  warnings = [];
  hostProcess.on('warning', onWarning);
  locks = new LockClient(redis, { watchdogTimeout: 600 });
});
afterEach(async () => {
  hostProcess.off('warning', onWarning);
  await locks.close();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("warns within a second when the README's nested services run outside every scope, naming locks.scope()", async () => {
  const { placeOrder } = orderService(locks, new Map());
  const order = id();
  const start = performance.now();
  // Without a scope the inner lock() waits for the outer one, which waits for it.
  const stuck = placeOrder(order).then(
    () => 'completed',
    (error: unknown) => error,
  );
  await waitFor(() => warnings.length > 0, { timeout: 3_000, message: 'no HOLDFAST_SELF_DEADLOCK warning' });
  const [{ at, warning }] = warnings;
  expect(at - start).toBeLessThan(1_000);
  expect(warning.name).toBe('HoldfastWarning');
  expect(warning.message).toContain(`'order:${order}'`);
  expect(warning.message).toContain('locks.scope(');
  expect(warning.message).toContain('expressScope(locks)');
  // It is still stuck (a warning, not a rejection); closing the client ends the wait.
  expect(await Promise.race([stuck, pause(50).then(() => 'waiting')])).toBe('waiting');
  await locks.close();
  expect(await stuck).toBeInstanceOf(LockError);
});

it('warns about a nested lock() under acquire() outside every scope (the `await using` shape)', async () => {
  const lock = locks.getLock(id());
  const held = await lock.acquire(); // outside a scope: its own owner, not the caller's
  const nested = lock.lock().catch((error: unknown) => error);
  await waitFor(() => warnings.length > 0, { timeout: 3_000, message: 'no HOLDFAST_SELF_DEADLOCK warning' });
  expect(warnings[0].warning.message).toContain(`'${lock.name}'`);
  await held.release(); // the way out: then the nested call gets the lock
  expect(await nested).toBeUndefined();
  await lock.unlock();
});

it('warns once per lock name', async () => {
  const { placeOrder } = orderService(locks, new Map());
  const order = id();
  const first = placeOrder(order).catch((error: unknown) => error);
  await waitFor(() => warnings.length > 0, { timeout: 3_000, message: 'no first warning' });
  // Another nested call on the same name: no second warning for it.
  const lock = locks.getLock(`order:${order}`);
  const second = lock.lock().catch((error: unknown) => error);
  await pause(1_200);
  expect(warnings).toHaveLength(1);
  await locks.close();
  expect(await first).toBeInstanceOf(LockError);
  expect(await second).toBeInstanceOf(LockError);
});

it('lets two independent tasks on one handle outside any scope both complete, one after the other, without a warning', async () => {
  const lock = locks.getLock(id());
  let inside = 0;
  let most = 0;
  const task = async () => {
    await lock.lock();
    most = Math.max(most, ++inside);
    await pause(100);
    inside -= 1;
    await lock.unlock();
    return 'done';
  };
  await expect(Promise.all([task(), task()])).resolves.toEqual(['done', 'done']);
  expect(most).toBe(1);
  expect(warnings).toHaveLength(0);
});

it('does not warn while the lock keeps changing hands, however long the queue has waited', async () => {
  const lock = locks.getLock(id());
  const task = async () => {
    await lock.lock();
    await pause(300);
    await lock.unlock();
  };
  // The last of five waits about 1.2 s, but the lock never stays with one owner that long.
  const start = performance.now();
  await Promise.all(Array.from({ length: 5 }, task));
  expect(performance.now() - start).toBeGreaterThan(1_100);
  expect(warnings).toHaveLength(0);
});

it('lets independent tasks outside any scope that hold longer than a second still complete (they may get the warning once)', async () => {
  const lock = locks.getLock(id());
  const task = async () => {
    await lock.lock();
    await pause(1_100);
    await lock.unlock();
    return 'done';
  };
  await expect(Promise.all([task(), task()])).resolves.toEqual(['done', 'done']);
  // The documented trade-off: indistinguishable from the self-deadlock for a second.
  expect(warnings.length).toBeLessThanOrEqual(1);
});

it('does not warn for waits inside a scope, nor for a holder in another client', async () => {
  const name = id();
  const lock = locks.getLock(name);
  // In scopes: the nested call reenters, and a second request waits without a word.
  const request = () =>
    locks.scope(async () => {
      await lock.lock();
      await lock.lock();
      await pause(1_100);
      await lock.unlock();
      await lock.unlock();
    });
  await Promise.all([request(), request()]);
  // Held by another client (another process, as far as this one knows).
  const other = new LockClient(redis, { watchdogTimeout: 600 });
  try {
    const held = await other.getLock(name).acquire();
    const waiting = lock.lock();
    await pause(1_100);
    await held.release();
    await waiting;
    await lock.unlock();
  } finally {
    await other.close();
  }
  expect(warnings).toHaveLength(0);
});
