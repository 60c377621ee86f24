import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import vm from 'node:vm';
import express from 'express';
import fastify from 'fastify';
import Koa from 'koa';
import Redis from 'ioredis';
import { LockClient, expressScope, fastifyScope, koaScope } from '../../lib';
import { scopedApps } from '../../examples/request-scopes';
import { startServer, type RedisServer } from '../kit/servers';
import { waitFor } from '../helpers/wait';

// The scope integrations on real framework instances: the scope must span the whole
// handling of a request (body parsing included), so that nested lock() calls of one
// request reenter while two requests exclude each other; without it, the nested
// call waits on its own request and the self-deadlock warning comes within a second.

/** The real process: the `process` a spec sees is a copy whose events Node never emits. */
const hostProcess = vm.runInThisContext('process') as NodeJS.Process;

let redis: RedisServer;
let connection: Redis;
let locks: LockClient;
let warnings: Error[] = [];
const onWarning = (warning: Error & { code?: string }) => {
  if (warning.code === 'HOLDFAST_SELF_DEADLOCK') warnings.push(warning);
};

beforeAll(async () => {
  redis = await startServer();
  connection = new Redis(redis.port, '127.0.0.1');
});
afterAll(async () => {
  connection.disconnect();
  await redis.stop();
});
beforeEach(() => {
  warnings = [];
  hostProcess.on('warning', onWarning);
  locks = new LockClient(connection, { watchdogTimeout: 600 });
});
afterEach(async () => {
  hostProcess.off('warning', onWarning);
  await locks.close();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Nested service methods that hold the lock long enough for two requests to overlap. */
function orders(locks: LockClient) {
  const seen = { inside: 0, most: 0, acquired: 0 };
  locks.on('acquired', () => (seen.acquired += 1));
  const reserve = async (name: string) => {
    const lock = locks.getLock(name);
    await lock.lock(); // reenters in the request's scope
    await lock.unlock();
  };
  const place = async (name: string) => {
    const lock = locks.getLock(name);
    await lock.lock();
    try {
      seen.most = Math.max(seen.most, ++seen.inside);
      await pause(100);
      await reserve(name);
      seen.inside -= 1;
    } finally {
      await lock.unlock();
    }
  };
  return { place, seen };
}

interface App {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<App> {
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Place = (name: string) => Promise<void>;

/** Each framework with a POST route whose handler runs place(body.name) after the JSON body is read. */
const frameworks: Record<string, (place: Place, scoped: boolean) => Promise<App>> = {
  express: (place, scoped) => {
    const app = express();
    if (scoped) app.use(expressScope(locks));
    // After the scope: the body is read from stream events, and the handler still runs in the scope.
    app.use(express.json());
    app.post('/orders', async (req, res) => {
      await place((req.body as { name: string }).name);
      res.json({ ok: true });
    });
    return listen(app.listen(0, '127.0.0.1'));
  },
  koa: (place, scoped) => {
    const app = new Koa();
    app.silent = true; // the unscoped case ends with 'client closed'
    if (scoped) app.use(koaScope(locks));
    app.use(async (ctx, next) => {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      (ctx.request as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString());
      await next();
    });
    app.use(async (ctx) => {
      await place(((ctx.request as { body?: unknown }).body as { name: string }).name);
      ctx.body = { ok: true };
    });
    return listen(app.listen(0, '127.0.0.1'));
  },
  fastify: async (place, scoped) => {
    const app = fastify();
    if (scoped) await app.register(fastifyScope(locks));
    app.post('/orders', async (request) => {
      await place((request.body as { name: string }).name);
      return { ok: true };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
  },
};

/** A request that fails legibly instead of hanging when the handler never answers. */
const post = (app: App, name: string, signal = AbortSignal.timeout(5_000)) =>
  fetch(`${app.url}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }), signal });

let lockNames = 0;

describe.each(Object.keys(frameworks))('%s', (framework) => {
  it('runs each request in its own scope: nested calls reenter, concurrent requests exclude each other', async () => {
    const { place, seen } = orders(locks);
    const app = await frameworks[framework](place, true);
    try {
      const name = `${framework}-${++lockNames}`;
      const replies = await Promise.all([post(app, name), post(app, name), post(app, name)]);
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
      // One acquisition per request (the nested lock() reentered), never two at once.
      expect(seen).toEqual({ inside: 0, most: 1, acquired: 3 });
      expect(warnings).toHaveLength(0);
    } finally {
      await app.close();
    }
  });

  it('without the integration, the nested call waits on its own request and the warning names the fix', async () => {
    const { place } = orders(locks);
    const app = await frameworks[framework](place, false);
    const abort = new AbortController();
    try {
      const reply = post(app, `${framework}-${++lockNames}`, abort.signal).catch((error: unknown) => error);
      await waitFor(() => warnings.length > 0, { timeout: 3_000, message: 'no self-deadlock warning' });
      expect(warnings[0].message).toContain('locks.scope(');
      abort.abort();
      await reply;
      await locks.close(); // ends the stuck wait
    } finally {
      await app.close();
    }
  });
});

describe('fastify', () => {
  it('keeps the scope when a hook calls done() from a callback of a shared resource', async () => {
    // Like a callback-style connection pool: its events fire in the async context it was
    // created in, not in the request's, so whatever runs after the hook left the scope.
    const pool = new EventEmitter();
    const ticker = setInterval(() => pool.emit('tick'), 5);
    const { place, seen } = orders(locks);
    const app = fastify();
    await app.register(fastifyScope(locks));
    app.addHook('preParsing', (_request, _reply, payload, done) => {
      pool.once('tick', () => done(null, payload));
    });
    app.post('/orders', async (request) => {
      await place((request.body as { name: string }).name);
      return { ok: true };
    });
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}`;
      const replies = await Promise.all([1, 2].map(() => post({ url, close: async () => undefined }, 'fastify-pool')));
      expect(replies.map((r) => r.status)).toEqual([200, 200]);
      expect(seen).toEqual({ inside: 0, most: 1, acquired: 2 });
    } finally {
      clearInterval(ticker);
      await app.close();
    }
  });
});

it("the README's one-liners give each app a scope per request", async () => {
  const { place, seen } = orders(locks);
  const { express: expressApp, koa: koaApp, fastify: fastifyApp } = scopedApps(locks);
  expressApp.use(express.json()).post('/orders', async (req, res) => {
    await place((req.body as { name: string }).name);
    res.json({ ok: true });
  });
  koaApp.use(async (ctx) => {
    await place('readme-koa');
    ctx.body = { ok: true };
  });
  fastifyApp.post('/orders', async (request) => {
    await place((request.body as { name: string }).name);
    return { ok: true };
  });
  await fastifyApp.listen({ port: 0, host: '127.0.0.1' });
  const apps = [await listen(expressApp.listen(0, '127.0.0.1')), await listen(koaApp.listen(0, '127.0.0.1'))];
  apps.push({ url: `http://127.0.0.1:${(fastifyApp.server.address() as AddressInfo).port}`, close: () => fastifyApp.close() });
  try {
    const replies = await Promise.all(apps.flatMap((app, i) => [post(app, `readme-${i}`), post(app, `readme-${i}`)]));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(seen.acquired).toBe(6);
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
});

describe('argument checks', () => {
  it.each([
    ['expressScope', expressScope],
    ['koaScope', koaScope],
    ['fastifyScope', fastifyScope],
  ] as const)('%s names a bad locks argument', (name, integration) => {
    expect(() => integration(undefined as never)).toThrow(new TypeError(`${name}(locks): locks must be a LockClient, got undefined`));
    expect(() => integration({} as never)).toThrow(TypeError);
  });
});
