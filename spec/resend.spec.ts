import Redis from 'ioredis';
import { LockClient, type Lock } from '../lib';
import { startServer, type RedisServer } from '../scripts/servers';
import { TcpProxy } from './helpers/proxy';
import { waitFor } from './helpers/wait';

// Replies lost with the connection. ioredis resends a command whose reply never came
// once it reconnects (autoResendUnfulfilledCommands, on by default), so a script can run
// twice. Each case below makes the server run the call, loses the reply, and lets
// ioredis resend it: the lock must count the call once.

let server: RedisServer;
let admin: Redis;
let proxy: TcpProxy;
let conn: Redis;
let locks: LockClient;
let n = 0;
const key = (lockName: string) => `holdfast:{${lockName}}`;

beforeAll(async () => {
  server = await startServer();
  admin = new Redis(server.port, '127.0.0.1');
});
afterAll(async () => {
  admin.disconnect();
  await server.stop();
});
beforeEach(async () => {
  proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
  conn = new Redis(proxy.port, '127.0.0.1', { retryStrategy: () => 20 });
  conn.on('error', () => undefined);
  // A command timeout longer than the whole manoeuvre: the resent reply must be the one used.
  locks = new LockClient(conn, { watchdogTimeout: 1_000, commandTimeout: 5_000 });
  // Scripts loaded: the paused call is the EVALSHA itself, not a NOSCRIPT round.
  await locks.getLock('warm-up').run(async () => undefined);
  await locks.getFairLock('warm-up-fair').run(async () => undefined);
});
afterEach(async () => {
  await locks.close();
  conn.disconnect();
  await proxy.close();
});

/**
 * Starts `call` while the server holds write commands back (CLIENT PAUSE), swallows the
 * reply (blackhole) once `ran` sees the server carried it out, then resets the connection:
 * ioredis reconnects and sends the same command again.
 */
async function replyLost<T>(call: () => Promise<T>, ran: () => Promise<boolean>): Promise<T> {
  await admin.client('PAUSE', 200, 'WRITE');
  const result = call();
  result.catch(() => undefined);
  // The command has reached the server once it waits there behind the pause.
  await waitFor(async () => /blocked_clients:[1-9]/.test(await admin.info('clients')), { timeout: 1_000, interval: 2, message: 'the call held back by the pause' });
  proxy.blackhole();
  await waitFor(ran, { timeout: 2_000, interval: 5, message: 'the server ran the call' });
  proxy.drop();
  proxy.resume();
  return result;
}

const owners = async (lockName: string) => admin.hgetall(key(lockName));
const levels = async (lockName: string) => Object.values(await owners(lockName)).map(Number);

function fresh(fair = false): Lock {
  const lockName = `resend-${++n}`;
  return fair ? locks.getFairLock(lockName) : locks.getLock(lockName);
}

it.each([false, true])('counts an acquisition once when its reply is lost and ioredis resends it (fair: %s)', async (fair) => {
  const lock = fresh(fair);
  expect(await replyLost(() => lock.tryLock(), async () => (await admin.exists(key(lock.name))) === 1)).toBe(true);
  expect(await levels(lock.name)).toEqual([1]);
  await lock.unlock();
  // Counted twice, the hold would outlive unlock (the watchdog renewing it for good).
  expect(await admin.exists(key(lock.name))).toBe(0);
});

it('counts a reentry once when its reply is lost', async () => {
  const lock = fresh();
  await locks.scope(async () => {
    await lock.lock();
    await replyLost(() => lock.lock(), async () => (await levels(lock.name))[0] === 2);
    expect(await levels(lock.name)).toEqual([2]);
    expect(await lock.getHoldCount()).toBe(2);
    await lock.unlock();
    await lock.unlock();
  });
  expect(await admin.exists(key(lock.name))).toBe(0);
});

it.each([false, true])('drops one level, not two, when a nested unlock is resent: the lock stays held (fair: %s)', async (fair) => {
  const lock = fresh(fair);
  await locks.scope(async () => {
    await lock.lock();
    await lock.lock();
    await replyLost(() => lock.unlock(), async () => (await levels(lock.name))[0] === 1);
    // Decremented twice, the key would be gone while the caller still holds a level.
    expect(await levels(lock.name)).toEqual([1]);
    expect(await lock.isHeldByCurrentScope()).toBe(true);
    await lock.unlock();
  });
  expect(await admin.exists(key(lock.name))).toBe(0);
});

it.each([false, true])('completes a last unlock whose resend finds the lock already gone (fair: %s)', async (fair) => {
  const lock = fresh(fair);
  const lost: unknown[] = [];
  lock.on('lost', (e) => lost.push(e));
  await locks.scope(async () => {
    await lock.lock();
    await replyLost(() => lock.unlock(), async () => (await admin.exists(key(lock.name))) === 0);
  });
  expect(lost).toEqual([]);
  expect(await lock.isLocked()).toBe(false);
});

it('keeps the grant of a retry by the same owner while its timed-out attempt is given back', async () => {
  // Not a resend, but the case a "was this call applied already?" check in the script
  // confuses with one: the same owner's second attempt reaches Redis before the give-back
  // of its first (which timed out, then was granted late).
  const direct = new Redis(server.port, '127.0.0.1');
  const client = new LockClient(direct, { watchdogTimeout: 2_000, commandTimeout: 200 });
  try {
    await client.getLock('warm-up').run(async () => undefined);
    const lock = client.getLock(`resend-${++n}`);
    const evalshaCalls = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
    const before = await evalshaCalls();
    await client.scope(async () => {
      await admin.client('PAUSE', 300, 'WRITE');
      await expect(lock.tryLock()).rejects.toThrow(/no reply within 200 ms/);
      expect(await lock.tryLock()).toBe(true); // sent before the pause ends: granted after the first
      // Once the first attempt's late grant has been given back (a third script call after
      // the two acquires), one level must remain, ours.
      await waitFor(async () => (await evalshaCalls()) >= before + 3, { timeout: 1_000, interval: 5, message: 'the give-back' });
      expect(await levels(lock.name)).toEqual([1]);
      expect(await lock.isHeldByCurrentScope()).toBe(true);
      await lock.unlock();
    });
    expect(await admin.exists(key(lock.name))).toBe(0);
  } finally {
    await client.close();
    direct.disconnect();
  }
});

it('takes back a hand-off to a local waiter when the releasing call is resent and finds it done', async () => {
  const lock = fresh();
  let first = '';
  const waiterHolds = locks.scope(async () => {
    await lock.lock();
    first = Object.keys(await owners(lock.name))[0]!;
    const waiter = locks.scope(async () => {
      await lock.lock(); // queued: gets the lock handed over in the release script
      await lock.unlock();
    });
    await waitFor(async () => Number((await admin.pubsub('NUMSUB', `${key(lock.name)}:ch`))[1]) === 1, { timeout: 1_000, interval: 5, message: 'the waiter queued' });
    await replyLost(() => lock.unlock(), async () => !(first in (await owners(lock.name))));
    await waiter;
  });
  await waiterHolds;
  // Kept as the waiter's unknown second level, the hand-off would outlive its unlock.
  expect(await admin.exists(key(lock.name))).toBe(0);
});
