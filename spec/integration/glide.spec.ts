// What only the Valkey GLIDE adapter does (the behaviour matrix runs on it as project
// 'glide'): refusing clients that cannot subscribe at run time, EVALSHA's fallback
// through GLIDE's own NoScriptError, and GLIDE's request timeout, which can cut a reply
// before holdfast's own bound does.
import { GlideClient, Logger } from '@valkey/valkey-glide';
import Redis from 'ioredis';
import { LockClient, LockError } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { waitFor } from '../helpers/wait';

Logger.setLoggerConfig('off');

let server: RedisServer;
let admin: Redis;
const glides: GlideClient[] = [];
const clients: LockClient[] = [];

/** A GLIDE client of the test server; `requestTimeout` defaults to GLIDE's own (250 ms). */
async function glide(requestTimeout?: number): Promise<GlideClient> {
  const c = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: server.port }], ...(requestTimeout === undefined ? {} : { requestTimeout }) });
  glides.push(c);
  return c;
}

beforeAll(async () => {
  server = await startServer();
  admin = new Redis(server.port);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const c of glides.splice(0)) c.close();
  await admin.client('UNPAUSE');
  await admin.flushall();
});
afterAll(async () => {
  admin.disconnect();
  await server.stop();
});

it('takes a GlideClient, typed, and runs scripts again after the server lost them (NOSCRIPT)', async () => {
  const locks = new LockClient(await glide());
  clients.push(locks);
  const lock = locks.getLock('a');
  await lock.lock();
  await lock.unlock();
  await admin.script('FLUSH');
  await lock.lock();
  expect(await lock.isLocked()).toBe(true);
  await lock.unlock();
  expect(await admin.exists('holdfast:{a}')).toBe(0);
});

it('refuses a GLIDE client that cannot subscribe at run time (before 2.3) with a LockError', async () => {
  const c = await glide();
  // What an older client looks like to holdfast: everything but run-time subscribe.
  const old = Object.create(c, { subscribe: { value: undefined } }) as GlideClient;
  expect(() => new LockClient(old)).toThrow(LockError);
  expect(() => new LockClient(old)).toThrow(/2\.3 or later/);
  expect(await admin.dbsize()).toBe(0);
});

it("gives a grant back when GLIDE's requestTimeout cuts its reply (a break: the server may have run it)", async () => {
  const locks = new LockClient(await glide(100), { commandTimeout: 3_000 });
  clients.push(locks);
  await locks.getLock('warm-up').tryLock(); // connected, scripts loaded
  // The server holds the acquire back past GLIDE's 100 ms, then runs it.
  await admin.client('PAUSE', 400, 'ALL');
  const error = await locks
    .getLock('b')
    .tryLock(0, 10_000)
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).name === 'TimeoutError' || (error as Error).cause instanceof Error).toBe(true);
  // Granted by the server after the pause, given back by the client: nothing stays held.
  await waitFor(async () => (await admin.exists('holdfast:{b}')) === 0, { timeout: 3_000, message: 'the late grant given back' });
  expect(await locks.getLock('b').tryLock()).toBe(true);
});
