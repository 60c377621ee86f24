import vm from 'node:vm';
import Redis from 'ioredis';
import { LockClient, LockError, type Connection } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { closeConnection, lockConnection } from '../helpers/clients';
import { waitFor, withTimeout } from '../helpers/wait';

// Servers that lack a command (DESIGN "Servers that lack a command"): managed services
// and proxies disable WAIT or pub/sub. redis-server runs here with those commands
// renamed away, which makes it answer them as unknown commands, as those services do.

/** A test server without `commands`, the lock's connection to it, and an admin connection. */
async function without(commands: string[]): Promise<{ server: RedisServer; conn: Connection; admin: Redis }> {
  const server = await startServer({ config: commands.map((c) => `rename-command ${c} ""\n`).join('') });
  return { server, conn: await lockConnection(server.port), admin: new Redis(server.port, { lazyConnect: false }) };
}

describe('a server without WAIT', () => {
  let server: RedisServer;
  let conn: Connection;
  let admin: Redis;
  let locks: LockClient;

  beforeAll(async () => ({ server, conn, admin } = await without(['WAIT'])));
  afterEach(async () => {
    await locks?.close();
    await admin.flushall();
  });
  afterAll(async () => {
    await closeConnection(conn);
    admin.disconnect();
    await server.stop();
  });

  it('syncReplicas: an attempt fails with a LockError naming WAIT, and gives the grant back', async () => {
    locks = new LockClient(conn, { syncReplicas: { min: 1, timeout: 50 } });
    const error = await locks.getLock('replicated').tryLock().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockError);
    expect((error as Error).message).toMatch(/\bWAIT\b/);
    expect(await admin.exists('holdfast:{replicated}')).toBe(0);
  });

  it('syncReplicas: a wait ends at once with that error instead of retrying until it runs out (or forever)', async () => {
    locks = new LockClient(conn, { syncReplicas: { min: 1, timeout: 50 } });
    const error = await withTimeout(locks.getLock('waited').lock().catch((e: unknown) => e), 2_000, 'lock() without WAIT');
    expect(error).toBeInstanceOf(LockError);
    expect((error as Error).message).toMatch(/\bWAIT\b/);
    expect(await admin.exists('holdfast:{waited}')).toBe(0);
  });
});

describe('a server without pub/sub (SUBSCRIBE, SSUBSCRIBE, PSUBSCRIBE)', () => {
  let server: RedisServer;
  let conn: Connection;
  let admin: Redis;
  const clients: LockClient[] = [];
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  // jest gives each spec file its own `process` object; emitWarning reaches the host's.
  const hostProcess = vm.runInThisContext('process') as NodeJS.Process;

  beforeAll(async () => ({ server, conn, admin } = await without(['SUBSCRIBE', 'SSUBSCRIBE', 'PSUBSCRIBE'])));
  beforeEach(() => hostProcess.on('warning', onWarning));
  afterEach(async () => {
    hostProcess.off('warning', onWarning);
    warnings.length = 0;
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await admin.flushall();
  });
  afterAll(async () => {
    await closeConnection(conn);
    admin.disconnect();
    await server.stop();
  });

  const client = () => {
    const locks = new LockClient(conn);
    clients.push(locks);
    return locks;
  };

  it('a wait polls: it takes the lock within a bounded interval of its release (not at the lease end), and one warning per client says so', async () => {
    const [a, b] = [client(), client()];
    const held = a.getLock('job');
    const fair = a.getFairLock('job:fair');
    await held.lock();
    await fair.lock();
    const waiting = [b.getLock('job').lock(), b.getFairLock('job:fair').lock()];
    // Both clients have found no pub/sub (the holder at its first hold, the waiter at its
    // waits' first refusal) and fallen back to polling before the releases.
    await waitFor(() => warnings.filter((w) => (w as { code?: string }).code === 'HOLDFAST_NO_PUBSUB').length === 2, { timeout: 2_000, message: 'both clients polling' });
    const start = performance.now();
    await held.unlock();
    await fair.unlock();
    // The default lease is 30 s and a queued waiter's heartbeat 10 s: without polling, a wait would sleep that long.
    await withTimeout(Promise.all(waiting), 2_000, 'the waits after the releases').finally(() => waiting.forEach((w) => w.catch(() => undefined)));
    expect(performance.now() - start).toBeLessThan(2_000);
    const ours = warnings.filter((w) => (w as { code?: string }).code === 'HOLDFAST_NO_PUBSUB');
    // One per client: the waiter's (its two waits share it) and the holder's (its holder channel, subscribed at its first hold).
    expect(ours).toHaveLength(2);
    for (const w of ours) expect(w.message).toMatch(/\bSUBSCRIBE\b.*waits ask again every 200 ms/);
  });
});
