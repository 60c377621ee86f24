/**
 * The test infrastructure itself: local Redis topologies, the fault-injecting
 * proxy and the waiting helpers. Other specs trust these, so they must hold.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import Redis, { type RedisOptions } from 'ioredis';
import {
  PID_DIR,
  startCluster,
  startMasters,
  startServer,
  stopAll,
  type RedisServer,
  type TestCluster,
} from '../kit/servers';
import { TcpProxy } from '../kit/proxy';
import { nextEvent, waitFor, withTimeout } from '../helpers/wait';

/** Fail fast instead of retrying: these specs kill servers on purpose. */
const FAST: RedisOptions = {
  host: '127.0.0.1',
  lazyConnect: true,
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
  enableOfflineQueue: false,
  connectTimeout: 2_000,
  // A connection lost mid-handshake makes ioredis disconnect() a socket that
  // already closed; the (ref'd) fallback timer then holds jest for this long.
  disconnectTimeout: 100,
};

const clients: Redis[] = [];
function client(port: number, extra: RedisOptions = {}): Redis {
  const c = new Redis({ ...FAST, port, ...extra });
  c.on('error', () => undefined); // expected while we break things
  clients.push(c);
  return c;
}

async function connected(port: number, extra?: RedisOptions): Promise<Redis> {
  const c = client(port, extra);
  await c.connect();
  return c;
}

/** Resolves 'pending' if `p` has not settled within `ms`. */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<'settled' | 'pending'> {
  const outcome = p.then(
    () => 'settled' as const,
    () => 'settled' as const,
  );
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms);
  });
  try {
    return await Promise.race([outcome, pending]);
  } finally {
    clearTimeout(timer);
  }
}

function connectRaw(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve();
    });
    s.once('error', reject);
  });
}

afterEach(() => {
  for (const c of clients.splice(0)) if (c.status !== 'end') c.disconnect();
});

afterAll(() => stopAll());

describe('startServer', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startServer();
  });

  it('runs on 127.0.0.1, never on 6379, and answers PING', async () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.port).not.toBe(6379);
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(server.running).toBe(true);
    expect(fs.existsSync(path.join(PID_DIR, String(server.pid)))).toBe(true);
    const c = await connected(server.port);
    await expect(c.ping()).resolves.toBe('PONG');
    expect(await c.config('GET', 'save')).toEqual(['save', '']);
  });

  it('pause() stalls the server and resume() lets it answer', async () => {
    const c = await connected(server.port);
    server.pause();
    expect(server.paused).toBe(true);
    const ping = c.ping();
    expect(await settledWithin(ping, 300)).toBe('pending');
    server.resume();
    await expect(withTimeout(ping, 2_000, 'PING after resume')).resolves.toBe('PONG');
  });

  it('restart() comes back on the same port with no data', async () => {
    const before = await connected(server.port);
    await before.set('k', 'v');
    const { port, pid } = server;
    await server.restart();
    expect(server.port).toBe(port);
    expect(server.pid).not.toBe(pid);
    const after = await connected(server.port);
    expect(await after.get('k')).toBeNull();
    expect(await after.dbsize()).toBe(0);
  });

  it('restart() of a server started with aof keeps every write it acknowledged, even after a SIGKILL', async () => {
    const aof = await startServer({ aof: true });
    try {
      const before = await connected(aof.port);
      await before.set('k', 'v');
      await before.pexpire('k', 60_000);
      await aof.kill('SIGKILL');
      await aof.restart();
      const after = await connected(aof.port);
      expect(await after.get('k')).toBe('v');
      expect(await after.pttl('k')).toBeGreaterThan(50_000);
    } finally {
      await aof.stop();
    }
  });

  it('kill() makes connections fail; restart() after kill() works', async () => {
    const c = await connected(server.port);
    const closed = nextEvent(c, 'close', 2_000);
    const pid = server.pid;
    await server.kill();
    expect(server.running).toBe(false);
    expect(fs.existsSync(path.join(PID_DIR, String(pid)))).toBe(false);
    await closed;
    await expect(c.ping()).rejects.toThrow();
    await expect(connectRaw(server.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    await server.restart();
    await expect((await connected(server.port)).ping()).resolves.toBe('PONG');
  });

  it('stop() is idempotent and removes the tmp dir; a paused server stops too', async () => {
    const s = await startServer();
    s.pause();
    await Promise.all([s.stop(), s.stop()]);
    await s.stop();
    expect(s.running).toBe(false);
    expect(fs.existsSync(s.dir)).toBe(false);
  });

  it('refuses port 6379', async () => {
    await expect(startServer({ port: 6379 })).rejects.toThrow(RangeError);
    await expect(startServer({ args: ['--port', '6379'] })).rejects.toThrow(RangeError);
  });

  it('fails with the log tail when redis-server rejects its arguments', async () => {
    await expect(startServer({ args: ['--no-such-option', 'x'] })).rejects.toThrow(/no-such-option/);
  });
});

describe('startMasters', () => {
  let masters: RedisServer[];
  beforeAll(async () => {
    masters = await startMasters(3);
  });
  afterAll(() => Promise.all(masters.map((m) => m.stop())));

  it('starts independent servers', async () => {
    expect(new Set(masters.map((m) => m.port)).size).toBe(3);
    const [a, b, c] = await Promise.all(masters.map((m) => connected(m.port)));
    await a!.set('only-on-a', '1');
    expect(await a!.get('only-on-a')).toBe('1');
    expect(await b!.get('only-on-a')).toBeNull();
    expect(await c!.get('only-on-a')).toBeNull();
    await masters[1]!.kill();
    await expect(a!.ping()).resolves.toBe('PONG');
  });
});

describe('startCluster', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(() => cluster.stop());

  it('reaches cluster_state:ok and serves keys across slots', async () => {
    expect(cluster.nodes).toHaveLength(3);
    for (const node of cluster.nodes) {
      const info = await (await connected(node.port)).cluster('INFO');
      expect(info).toMatch(/cluster_state:ok/);
    }
    const rc = new Redis.Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 0 } });
    try {
      const keys = ['a', 'b', 'c', 'd', 'e', '{order:42}'];
      for (const k of keys) await rc.set(k, `v-${k}`);
      for (const k of keys) expect(await rc.get(k)).toBe(`v-${k}`);
    } finally {
      rc.disconnect();
    }
  });

  it('restart() of a node keeps its cluster identity and slots but not its data', async () => {
    const node = cluster.nodes[0]!;
    const before = await connected(node.port);
    const id = await before.cluster('MYID');
    // A key in a slot this node serves, so plain SET/GET on it get no MOVED.
    const ranges = (await before.cluster('SLOTS')).filter(([, , master]) => master?.[1] === node.port);
    let key = '';
    for (let i = 0; !key; i++) {
      const slot = (await before.cluster('KEYSLOT', `k${i}`)) as number;
      if (ranges.some(([lo, hi]) => lo <= slot && slot <= hi)) key = `k${i}`;
    }
    await before.set(key, 'v');

    await node.kill();
    await node.restart();
    const after = await connected(node.port);
    expect(await after.cluster('MYID')).toBe(id);
    await waitFor(
      async () => {
        const infos = await Promise.all(cluster.nodes.map(async (n) => (await connected(n.port)).cluster('INFO')));
        return infos.every((i) => /cluster_state:ok/.test(i));
      },
      { timeout: 10_000, interval: 100, message: 'cluster_state:ok on every node after a node restart' },
    );
    expect(await after.get(key)).toBeNull(); // still its slot (no MOVED), data gone
  });
});

describe('TcpProxy', () => {
  let server: RedisServer;
  let proxy: TcpProxy;
  beforeAll(async () => {
    server = await startServer();
  });
  beforeEach(async () => {
    proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
  });
  afterEach(() => proxy.close());

  it('forwards normally', async () => {
    const c = await connected(proxy.port);
    await c.set('via-proxy', 'yes');
    expect(await (await connected(server.port)).get('via-proxy')).toBe('yes');
    expect(proxy.connections).toBe(1);
  });

  it('blackhole() stalls a GET; drop() then makes it fail', async () => {
    const c = await connected(proxy.port);
    proxy.blackhole();
    const get = c.get('k');
    expect(await settledWithin(get, 300)).toBe('pending');
    expect(proxy.connections).toBe(1); // the socket stays open
    proxy.drop();
    await expect(withTimeout(get, 2_000, 'GET after drop')).rejects.toThrow();
  });

  it('blackhole() also stalls new connections; resume() serves new ones again', async () => {
    proxy.blackhole();
    const c = client(proxy.port);
    const connecting = c.connect();
    await waitFor(() => proxy.connections === 1, { message: 'connection accepted while blackholed' });
    // TCP is up, but ioredis awaits replies (CLIENT SETINFO) before 'ready'.
    expect(await settledWithin(connecting, 300)).toBe('pending');
    proxy.drop();
    await expect(withTimeout(connecting, 2_000, 'connect() after drop')).rejects.toThrow();
    proxy.resume();
    await expect((await connected(proxy.port)).ping()).resolves.toBe('PONG');
  });

  it('drop() closes the client connection', async () => {
    const c = await connected(proxy.port);
    const closed = nextEvent(c, 'close', 2_000);
    proxy.drop();
    await closed;
    await waitFor(() => proxy.connections === 0, { message: 'no connection left after drop()' });
  });

  it('latency(ms) delays every reply by ms, in order; latency(0) forwards at once again', async () => {
    const c = await connected(proxy.port);
    proxy.latency(150);
    const t0 = Date.now();
    const replies = await Promise.all([c.set('lat', '1'), c.incr('lat'), c.get('lat')]);
    expect(replies).toEqual(['OK', 2, '2']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2 * 150 - 10); // the command and its reply, each delayed
    proxy.latency(0);
    const t1 = Date.now();
    await c.ping();
    expect(Date.now() - t1).toBeLessThan(150);
  });

  it('refuse(true) rejects new connections until refuse(false)', async () => {
    proxy.refuse(true);
    await expect(client(proxy.port).connect()).rejects.toThrow();
    proxy.refuse(false);
    await expect((await connected(proxy.port)).ping()).resolves.toBe('PONG');
  });
});

describe('wait helpers', () => {
  it('waitFor polls until truthy and fails with its message', async () => {
    let n = 0;
    await expect(waitFor(() => ++n >= 3, { interval: 5 })).resolves.toBe(true);
    await expect(waitFor(() => false, { timeout: 50, message: 'never true' })).rejects.toThrow(
      /never true within 50 ms/,
    );
    await expect(waitFor(() => new Promise(() => undefined), { timeout: 50 })).rejects.toThrow(/within 50 ms/);
  });

  it('nextEvent and withTimeout name what did not happen', async () => {
    const { EventEmitter } = await import('node:events');
    const e = new EventEmitter();
    const got = nextEvent<number>(e, 'x', 1_000);
    e.emit('x', 42, 'ignored');
    await expect(got).resolves.toBe(42);
    await expect(nextEvent(e, 'never', 30)).rejects.toThrow(/'never'/);
    expect(e.listenerCount('never')).toBe(0);
    await expect(withTimeout(new Promise(() => undefined), 30, 'the thing')).rejects.toThrow(
      /the thing did not settle within 30 ms/,
    );
  });
});
