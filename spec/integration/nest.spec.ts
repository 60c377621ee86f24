import 'reflect-metadata';
import { Controller, Get, Injectable, Param, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import { LockClient, LockTimeoutError } from '../../lib';
import { HoldfastModule, WithLock } from '../../lib/nest';
import { startServer, type RedisServer } from '../kit/servers';
import { appModule } from '../../examples/nest';

// holdfast/nest on a real Nest application (platform-express, real HTTP requests) and a
// real Redis: the module provides one LockClient, each request runs in its own owner
// scope, and @WithLock runs a method under a lock named from its arguments.

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

/** What the handlers saw: who was inside a section, the most at once, the hold counts. */
const seen = { inside: 0, most: 0, holdCounts: [] as number[] };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

@Injectable()
class StockService {
  constructor(readonly locks: LockClient) {}

  // The same lock as the controller's: called from inside it, it reenters.
  @WithLock((id: string) => `order:${id}`)
  async reserve(id: string): Promise<number> {
    // A plain lock() in the request's scope reenters too (the request scope).
    const lock = this.locks.getLock(`order:${id}`);
    await lock.lock();
    try {
      return await lock.getHoldCount();
    } finally {
      await lock.unlock();
    }
  }

  @WithLock('reports', { waitTime: 100 })
  async report(ms: number): Promise<string> {
    await pause(ms);
    return 'done';
  }
}

@Controller('plain')
class PlainController {
  constructor(private readonly locks: LockClient) {}

  // No decorator: lock() and the nested tryLock() are one owner only through the request scope.
  @Get(':id')
  async nested(@Param('id') id: string): Promise<{ reentered: boolean }> {
    const lock = this.locks.getLock(`plain:${id}`);
    await lock.lock();
    try {
      const reentered = await lock.tryLock();
      if (reentered) await lock.unlock();
      return { reentered };
    } finally {
      await lock.unlock();
    }
  }
}

@Controller('orders')
class OrdersController {
  constructor(private readonly stock: StockService) {}

  @Get(':id')
  @WithLock((id: string) => `order:${id}`, { waitTime: 5_000 })
  async place(@Param('id') id: string): Promise<{ holdCount: number }> {
    seen.most = Math.max(seen.most, ++seen.inside);
    await pause(100);
    const holdCount = await this.stock.reserve(id);
    seen.holdCounts.push(holdCount);
    seen.inside -= 1;
    return { holdCount };
  }
}

async function start(requestScope = true): Promise<{ app: INestApplication; url: string; locks: LockClient }> {
  const moduleRef = await Test.createTestingModule({
    imports: [HoldfastModule.forRoot({ connection: redis, options: { watchdogTimeout: 3_000 }, requestScope })],
    controllers: [OrdersController, PlainController],
    providers: [StockService],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl(), locks: app.get(LockClient) };
}

beforeEach(() => {
  Object.assign(seen, { inside: 0, most: 0, holdCounts: [] });
});

it('two concurrent requests for one order exclude each other; the nested service call reenters', async () => {
  const { app, url } = await start();
  try {
    const replies = await Promise.all([fetch(`${url}/orders/42`), fetch(`${url}/orders/42`)]);
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(await Promise.all(replies.map((r) => r.json()))).toEqual([{ holdCount: 3 }, { holdCount: 3 }]);
    expect(seen.most).toBe(1);
    expect(await redis.exists('holdfast:{order:42}')).toBe(0);
  } finally {
    await app.close();
  }
});

it('runs each request in its own owner scope: a nested lock call reenters, unless requestScope is false', async () => {
  for (const [requestScope, reentered] of [[true, true], [false, false]] as const) {
    const { app, url } = await start(requestScope);
    try {
      const reply = await fetch(`${url}/plain/7`);
      expect(await reply.json()).toEqual({ reentered });
      expect(await redis.exists('holdfast:{plain:7}')).toBe(0);
    } finally {
      await app.close();
    }
  }
});

it("takes the lock the arguments name: requests for two orders run at once", async () => {
  const { app, url } = await start();
  try {
    const replies = await Promise.all([fetch(`${url}/orders/1`), fetch(`${url}/orders/2`)]);
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(seen.most).toBe(2);
  } finally {
    await app.close();
  }
});

it('a call that cannot have the lock within waitTime rejects with LockTimeoutError; app.close() closes the client', async () => {
  const { app, locks } = await start();
  const stock = app.get(StockService);
  const first = stock.report(400);
  await expect(stock.report(0)).rejects.toBeInstanceOf(LockTimeoutError);
  await expect(first).resolves.toBe('done');
  await app.close();
  // Closed: the client refuses new work, and no hold or queue is left in Redis (the fencing counter stays: keyRetention).
  expect(() => locks.getLock('after-close')).toThrow(/closed/);
  expect((await redis.keys('holdfast:{reports}*')).filter((k) => !k.endsWith(':fence'))).toEqual([]);
});

it('refuses a name that is neither a string nor a function, and a name function that returns none', async () => {
  expect(() => WithLock(42 as unknown as string)).toThrow(TypeError);
  expect(() => WithLock('')).toThrow(/non-empty string/);
  // Not a Nest provider: nothing injects the client.
  class Bad {
    @WithLock(() => '')
    async run(): Promise<void> {}
  }
  await expect(new Bad().run()).rejects.toThrow(/no LockClient was injected/);
});

it('runs the guide example (examples/nest.ts): the nested service call reenters the request\'s lock', async () => {
  const moduleRef = await Test.createTestingModule({ imports: [appModule(redis)] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  try {
    const reply = await fetch(`${await app.getUrl()}/orders/abc`);
    expect(await reply.json()).toEqual({ holdCount: 2 });
    expect(await redis.exists('holdfast:{stock:abc}')).toBe(0);
  } finally {
    await app.close();
  }
});
