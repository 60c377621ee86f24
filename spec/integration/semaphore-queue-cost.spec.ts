import Redis from 'ioredis';
import { LockClient } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { commandCalls } from '../helpers/command-stats';
import { waitFor } from '../helpers/wait';

// What a refused semaphore attempt costs Redis does not grow with the queue: it reads
// the tickets of the first waiters only, up to the first that leaves no room (none when
// the permits held leave none). And a hand-off costs one script call of a few commands
// and one message: each script reads the semaphore's hash once and writes it once.

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

it('a refused attempt behind 20 waiters does not read a ticket per waiter', async () => {
  // One client per waiter (a client's own waits on one name line up in it, not in Redis);
  // heartbeats long enough that no waiter asks again while the attempt is counted.
  const clients = Array.from({ length: 21 }, () => new LockClient(redis, { watchdogTimeout: 30_000 }));
  const sem = clients[0].getSemaphore('sem-cost', 2);
  const held = await sem.acquire({ permits: 2 });
  const waits = clients.slice(1).map((c) => c.getSemaphore('sem-cost', 2).acquire({ waitTime: 10_000 }));
  try {
    await waitFor(async () => (await redis.llen('holdfast:{sem-cost}:sem:queue')) === 20, { message: 'twenty waiters queued' });
    const before = await commandCalls(redis, 'hget');
    expect(await sem.tryAcquire()).toBeNull();
    // A few fields of the semaphore and the first waiters' tickets; summing every ticket read 24.
    expect((await commandCalls(redis, 'hget')) - before).toBeLessThan(20);
  } finally {
    await held.release();
    await Promise.allSettled(waits.map((w) => w.then((permit) => permit.release())));
    await Promise.all(clients.map((c) => c.close()));
  }
});

/**
 * Every command the server has run so far, scripts' own commands included (INFO
 * commandstats), but INFO and the clients' subscriptions (made when a wait or a hold
 * begins, on their own connection, whenever they come).
 */
async function allCalls(): Promise<Record<string, number>> {
  const stats = await redis.info('commandstats');
  const calls: Record<string, number> = {};
  for (const m of stats.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) if (!/^(info|s?subscribe|s?unsubscribe)$/.test(m[1])) calls[m[1]] = Number(m[2]);
  return calls;
}

function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const d: Record<string, number> = {};
  for (const [verb, n] of Object.entries(after)) if (n > (before[verb] ?? 0)) d[verb] = n - (before[verb] ?? 0);
  return d;
}

const total = (d: Record<string, number>) => Object.values(d).reduce((a, b) => a + b, 0);

it('a refused attempt with no room reads neither the queue nor a ticket', async () => {
  const [holder, waiter, asker] = [0, 1, 2].map(() => new LockClient(redis, { watchdogTimeout: 30_000 }));
  const held = await holder.getSemaphore('sem-full', 2).acquire({ permits: 2 });
  const wait = waiter.getSemaphore('sem-full', 2).acquire({ waitTime: 10_000 });
  try {
    await waitFor(async () => (await redis.llen('holdfast:{sem-full}:sem:queue')) === 1, { message: 'one waiter queued' });
    // Warm: the asker's scripts are loaded.
    expect(await asker.getSemaphore('sem-full', 2).tryAcquire()).toBeNull();
    // The clients share one connection and the server counts everyone's commands: the
    // waiter's retry after it subscribed can land in a window. Others' commands only add
    // to the count, so the quietest of three windows is the attempt's own cost.
    const windows: Record<string, number>[] = [];
    for (let i = 0; i < 3; i++) {
      const before = await allCalls();
      expect(await asker.getSemaphore('sem-full', 2).tryAcquire()).toBeNull();
      windows.push(delta(before, await allCalls()));
    }
    const d = windows.reduce((quietest, w) => (total(w) < total(quietest) ? w : quietest));
    expect(d.lrange ?? 0).toBe(0);
    expect(d.hget ?? 0).toBe(0);
    // The script call and what it runs: the clock, the hash, the dead waiters and the first expiry.
    expect(total(d)).toBeLessThanOrEqual(6);
  } finally {
    await held.release();
    await (await wait).release();
    await Promise.all([holder, waiter, asker].map((c) => c.close()));
  }
});

it('a release that grants the head costs one script call of at most 25 commands and one message', async () => {
  const [holder, waiter] = [0, 1].map(() => new LockClient(redis, { watchdogTimeout: 30_000 }));
  // Warm: the name's stamp and keys exist, as in a busy semaphore, and each client has
  // its scripts loaded and its holder channel subscribed (at its first hold).
  await (await holder.getSemaphore('sem-hand', 2).acquire()).release();
  await (await waiter.getSemaphore('sem-hand', 2).acquire()).release();
  const other = await holder.getSemaphore('sem-hand', 2).acquire();
  const held = await holder.getSemaphore('sem-hand', 2).acquire();
  const scripts = await commandCalls(redis, 'evalsha', 'eval');
  const wait = waiter.getSemaphore('sem-hand', 2).acquire({ waitTime: 10_000 });
  try {
    // Its attempt, refused, joins the queue; subscribed, it asks once more (a release
    // between the two is not missed); then it sleeps until a message.
    await waitFor(async () => (await commandCalls(redis, 'evalsha', 'eval')) - scripts === 2, { message: 'the waiter queued, subscribed and asked again' });
    const before = await allCalls();
    await held.release();
    const d = delta(before, await allCalls());
    expect((d.evalsha ?? 0) + (d.eval ?? 0)).toBe(1);
    expect(d.publish).toBe(1);
    // 35 before each script read and wrote the hash field by field.
    expect(total(d)).toBeLessThanOrEqual(25);
  } finally {
    await other.release();
    await (await wait).release();
    await Promise.all([holder, waiter].map((c) => c.close()));
  }
});
