import Redis from 'ioredis';
import { LockClient } from '../../lib';
import { startServer, type RedisServer } from '../kit/servers';
import { commandCalls } from '../helpers/command-stats';
import { waitFor } from '../helpers/wait';

// What a refused semaphore attempt costs Redis does not grow with the queue: it reads
// the tickets of the first waiters only, up to the first that leaves no room.

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
