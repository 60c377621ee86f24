/**
 * Local Redis test topologies (single server, independent masters, Cluster),
 * started from the `redis-server` binary on 127.0.0.1 only.
 *
 * Used two ways:
 *   - imported by specs: `startServer()`, `startMasters(n)`, `startCluster()`;
 *   - as a CLI: `npx tsx scripts/servers.ts single | masters [N] | cluster [N] | sentinel`.
 *
 * Safety rules: port 6379 is never used (another Redis lives there), nothing
 * binds outside 127.0.0.1, and every started PID is recorded twice (in memory,
 * killed on process 'exit'; and as a file under os.tmpdir()/holdfast-test-pids,
 * for jest's globalTeardown when a worker dies without running 'exit').
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
// Timers from the module, not the globals: specs may install jest fake timers.
import { clearTimeout, setTimeout } from 'node:timers';
import vm from 'node:vm';

export interface RedisServer {
  host: '127.0.0.1';
  port: number;
  pid: number;
  url: string;
  /** Graceful stop (SIGTERM; no save points are configured), waits for exit; idempotent. */
  stop(): Promise<void>;
  /** Sends `signal` (default SIGKILL) and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /**
   * Starts again on the same port with EMPTY data (nothing is persisted).
   * On a Cluster node the nodes.conf is kept, so the node rejoins with its
   * old id and slots, but the keys it held are gone.
   */
  restart(): Promise<void>;
  /** SIGSTOP: the process keeps its sockets but answers nothing (a hung server). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** The process exists (it may be paused). */
  readonly running: boolean;
  /** pause() was called and resume() not yet. */
  readonly paused: boolean;
  /** Working directory (log file `redis.log`, nodes.conf for Cluster nodes). */
  readonly dir: string;
}

export interface TestCluster {
  nodes: RedisServer[];
  startupNodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

const HOST = '127.0.0.1' as const;
/** The port of the Redis on this machine that is not ours. */
const FORBIDDEN_PORT = 6379;
const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const CLUSTER_READY_TIMEOUT_MS = 20_000;
const PORT_RETRIES = 5;

export const PID_DIR = path.join(os.tmpdir(), 'holdfast-test-pids');

// ---------------------------------------------------------------------------
// Process-wide tracking
//
// Under jest each spec file gets a sandboxed copy of `process` whose events are
// never emitted, and its own instance of this module. So the 'exit' hook is
// installed once on the real process (reached through the main vm context),
// and its registry lives there too, shared by every module instance.

interface PidFileContent {
  /** The node process that started the server: teardown spares live foreign owners. */
  owner: number;
  port: number;
  dir: string;
}

interface Registry {
  pids: Map<number, string>; // pid -> pid file
  dirs: Set<string>;
}

const hostProcess = vm.runInThisContext('process') as NodeJS.Process;
const REGISTRY_KEY = Symbol.for('holdfast.test-servers.registry');

function registry(): Registry {
  const slot = hostProcess as unknown as Record<symbol, Registry | undefined>;
  let reg = slot[REGISTRY_KEY];
  if (reg) return reg;
  const created: Registry = { pids: new Map(), dirs: new Set() };
  slot[REGISTRY_KEY] = created;
  // Only synchronous work is possible in 'exit'; SIGKILL cannot be ignored,
  // also not by a SIGSTOPped (paused) server.
  hostProcess.on('exit', () => {
    for (const [pid, file] of created.pids) {
      try {
        hostProcess.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      fs.rmSync(file, { force: true });
    }
    for (const dir of created.dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  reg = created;
  return reg;
}

function trackPid(pid: number, content: PidFileContent): void {
  const file = path.join(PID_DIR, String(pid));
  fs.mkdirSync(PID_DIR, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(content));
  registry().pids.set(pid, file);
}

function untrackPid(pid: number): void {
  const reg = registry();
  const file = reg.pids.get(pid);
  if (file) fs.rmSync(file, { force: true });
  reg.pids.delete(pid);
}

function makeTmpDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  registry().dirs.add(dir);
  return dir;
}

function removeTmpDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  registry().dirs.delete(dir);
}

/** What this module instance started and has not stopped yet, for stopAll(). */
const live = new Set<{ stop(): Promise<void> }>();

// ---------------------------------------------------------------------------
// Ports

/**
 * Ports handed out by this process: the probe socket is closed before
 * redis-server binds, so parallel starts could otherwise get the same port.
 */
const handedOut = new Set<number>();

function probePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await probePort();
    if (port === FORBIDDEN_PORT || handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('freePort: no free port found on 127.0.0.1 after 50 attempts');
}

function assertUsablePort(port: number): void {
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new RangeError(`port must be an integer in 1..65535, got ${port}`);
  }
  if (port === FORBIDDEN_PORT) {
    throw new RangeError('port 6379 belongs to a Redis that is not ours; never use it');
  }
}

// ---------------------------------------------------------------------------
// Minimal RESP client: readiness checks must not depend on ioredis, which
// would retry and queue instead of failing fast.

function encodeCommand(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** One complete reply from the start of `buf`, or undefined if more bytes are needed. */
function parseReply(buf: Buffer): { ok: boolean; value: string } | undefined {
  const eol = buf.indexOf('\r\n');
  if (eol < 0) return undefined;
  const head = buf.subarray(0, eol).toString();
  switch (head[0]) {
    case '+':
    case ':':
      return { ok: true, value: head.slice(1) };
    case '-':
      return { ok: false, value: head.slice(1) };
    case '$': {
      const len = Number(head.slice(1));
      if (len < 0) return { ok: true, value: '' };
      if (buf.length < eol + 2 + len + 2) return undefined;
      return { ok: true, value: buf.subarray(eol + 2, eol + 2 + len).toString() };
    }
    default:
      return { ok: false, value: `unexpected reply: ${JSON.stringify(head)}` };
  }
}

/** Sends one command on a fresh connection; rejects on error reply, close or timeout. */
export function rawCommand(port: number, args: string[], timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const socket = net.createConnection({ host: HOST, port });
    const finish = (err: Error | undefined, value?: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(value ?? '');
    };
    const timer = setTimeout(
      () => finish(new Error(`${args[0]} on 127.0.0.1:${port}: no reply within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.once('connect', () => socket.write(encodeCommand(args)));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      const reply = parseReply(buf);
      if (!reply) return;
      if (reply.ok) finish(undefined, reply.value);
      else finish(new Error(`${args[0]} on 127.0.0.1:${port}: ${reply.value}`));
    });
    socket.once('error', (err) => finish(err));
    socket.once('close', () => finish(new Error(`${args[0]} on 127.0.0.1:${port}: connection closed`)));
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A deadline on a real timer rather than Date.now(), which fake timers freeze. */
function deadline(ms: number): { readonly expired: boolean; cancel(): void } {
  let expired = false;
  const timer = setTimeout(() => (expired = true), ms);
  return {
    get expired() {
      return expired;
    },
    cancel: () => clearTimeout(timer),
  };
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function readTail(file: string, lines: number): string {
  try {
    return tail(fs.readFileSync(file, 'utf8'), lines);
  } catch {
    return '(no log file)';
  }
}

// ---------------------------------------------------------------------------
// One redis-server process

class PortInUseError extends Error {}

interface ServerConfig {
  port: number;
  /** Extra redis-server arguments. */
  args: string[];
  /**
   * Contents of a config file written to `<dir>/redis.conf` and passed first (redis-server
   * reads a config file only as its first argument; Sentinel needs one it can rewrite).
   */
  config?: string;
  dir: string;
  /** A Cluster node's dir belongs to the cluster, which removes it. */
  ownsDir: boolean;
  /**
   * Present when the ports came from freePort(): after a collision with
   * another process on the first start, picks new ones (restarts never move).
   */
  repick?: (config: ServerConfig) => Promise<void>;
}

class LocalRedisServer implements RedisServer {
  readonly host = HOST;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private alive = false;
  private isPaused = false;
  private output = '';
  private stopping: Promise<void> | undefined;

  constructor(private readonly config: ServerConfig) {}

  get port(): number {
    return this.config.port;
  }
  get pid(): number {
    return this.child?.pid ?? 0;
  }
  get url(): string {
    return `redis://${HOST}:${this.config.port}`;
  }
  get running(): boolean {
    return this.alive;
  }
  get paused(): boolean {
    return this.alive && this.isPaused;
  }
  get dir(): string {
    return this.config.dir;
  }
  private get logFile(): string {
    return path.join(this.config.dir, 'redis.log');
  }

  /** First start: a port collision with another process moves to a fresh port. */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launch();
        return;
      } catch (err) {
        if (!(err instanceof PortInUseError) || !this.config.repick || attempt >= PORT_RETRIES) throw err;
        await this.config.repick(this.config);
      }
    }
  }

  private async launch(): Promise<void> {
    fs.mkdirSync(this.config.dir, { recursive: true });
    // "Empty data" on restart even if someone configured persistence through args.
    for (const f of ['dump.rdb', 'appendonly.aof', 'appendonlydir']) {
      fs.rmSync(path.join(this.config.dir, f), { recursive: true, force: true });
    }
    fs.rmSync(this.logFile, { force: true });
    const configFile = path.join(this.config.dir, 'redis.conf');
    // Written once: Sentinel rewrites it with what it learned, which a restart keeps.
    if (this.config.config !== undefined && !fs.existsSync(configFile)) fs.writeFileSync(configFile, this.config.config);
    const args = [
      ...(this.config.config === undefined ? [] : [configFile]),
      '--port', String(this.config.port),
      '--bind', HOST,
      '--save', '',
      '--appendonly', 'no',
      '--daemonize', 'no',
      '--dir', this.config.dir,
      '--logfile', this.logFile,
      ...this.config.args,
    ];
    // Not detached: a Ctrl-C on the terminal reaches redis-server too, so an
    // interrupted run cannot leave servers behind.
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.output = '';
    const collect = (chunk: Buffer): void => {
      // Config errors are printed before the log file is opened.
      this.output = (this.output + chunk.toString()).slice(-4_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    this.exited = new Promise((resolve) => {
      child.once('exit', () => {
        this.alive = false;
        this.isPaused = false;
        if (child.pid !== undefined) untrackPid(child.pid);
        resolve();
      });
      // 'exit' never comes when the binary could not be spawned at all.
      void spawnError.then(() => {
        this.alive = false;
        resolve();
      });
    });
    this.child = child;
    if (child.pid === undefined) {
      const err = await spawnError;
      throw new Error(`cannot spawn redis-server (is it on PATH?): ${err.message}`);
    }
    this.alive = true;
    // The dir to clean up after a crash: a Cluster node's parent is the cluster's.
    const tmpDir = this.config.ownsDir ? this.config.dir : path.dirname(this.config.dir);
    trackPid(child.pid, { owner: hostProcess.pid, port: this.config.port, dir: tmpDir });
    try {
      await this.waitReady(child.pid);
    } catch (err) {
      await this.forceKill();
      const log = `${tail(this.output, 10)}\n${readTail(this.logFile, 20)}`.trim();
      if (/address already in use/i.test(log)) {
        throw new PortInUseError(`port ${this.config.port} is already in use:\n${log}`);
      }
      throw new Error(`redis-server on port ${this.config.port} did not become ready: ${(err as Error).message}\n--- log tail ---\n${log}`);
    }
  }

  /**
   * PING until PONG, then check the answering process is ours: a foreign
   * process that took the port between freePort() and our bind would also answer.
   */
  private async waitReady(pid: number): Promise<void> {
    const limit = deadline(READY_TIMEOUT_MS);
    let lastError = 'no attempt';
    try {
      while (!limit.expired) {
        if (!this.alive) throw new Error('redis-server exited during startup');
        try {
          const pong = await rawCommand(this.config.port, ['PING'], 1_000);
          if (pong === 'PONG') {
            const info = await rawCommand(this.config.port, ['INFO', 'server'], 1_000);
            const answering = /process_id:(\d+)/.exec(info)?.[1];
            if (Number(answering) === pid) return;
            throw new PortInUseError(`port ${this.config.port} is answered by another process (pid ${answering})`);
          }
          lastError = `PING answered ${pong}`;
        } catch (err) {
          if (err instanceof PortInUseError) throw err;
          // Refused until it listens, -LOADING while starting: retry.
          lastError = (err as Error).message;
        }
        await delay(25);
      }
    } finally {
      limit.cancel();
    }
    throw new Error(`no PONG within ${READY_TIMEOUT_MS} ms (last: ${lastError})`);
  }

  private signal(sig: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (!this.alive || pid === undefined) return;
    try {
      process.kill(pid, sig);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }

  private async waitExit(ms: number): Promise<boolean> {
    if (!this.alive) return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([this.exited.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async forceKill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.alive) return;
    this.signal(signal);
    // A stopped process holds other signals pending until it continues.
    if (this.isPaused && signal !== 'SIGKILL') this.signal('SIGCONT');
    if (!(await this.waitExit(STOP_TIMEOUT_MS))) {
      throw new Error(`redis-server pid ${this.pid} (port ${this.port}) did not exit within ${STOP_TIMEOUT_MS} ms of ${signal}`);
    }
  }

  /** Graceful exit, escalating to SIGKILL; the process is gone when this resolves. */
  private async terminate(): Promise<void> {
    if (!this.alive) return;
    this.signal('SIGTERM');
    if (this.isPaused) this.signal('SIGCONT');
    if (!(await this.waitExit(STOP_TIMEOUT_MS))) await this.forceKill();
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      try {
        await this.terminate();
      } finally {
        if (this.config.ownsDir) removeTmpDir(this.config.dir);
        live.delete(this);
      }
    })();
    return this.stopping;
  }

  async restart(): Promise<void> {
    await this.stopping; // a restart after stop() starts it up again
    await this.terminate();
    this.stopping = undefined;
    if (this.config.ownsDir) registry().dirs.add(this.config.dir);
    live.add(this);
    await this.launch(); // same port: a collision here is a real error
  }

  pause(): void {
    if (!this.alive) throw new Error(`redis-server on port ${this.port} is not running`);
    this.signal('SIGSTOP');
    this.isPaused = true;
  }

  resume(): void {
    if (!this.alive) return;
    this.signal('SIGCONT');
    this.isPaused = false;
  }
}

// ---------------------------------------------------------------------------
// Topologies

export async function startServer(opts: { port?: number; args?: string[]; config?: string } = {}): Promise<RedisServer> {
  if (opts.port !== undefined) assertUsablePort(opts.port);
  // Later arguments win in redis-server: these would bypass the port and address rules.
  const owned = (opts.args ?? []).find((a) => /^--(port|bind|unixsocket)$/i.test(a));
  if (owned) throw new RangeError(`args must not set ${owned}: use opts.port (the address is always 127.0.0.1)`);
  const server = new LocalRedisServer({
    port: opts.port ?? (await freePort()),
    args: [...(opts.args ?? [])],
    config: opts.config,
    dir: makeTmpDir('holdfast-redis-'),
    ownsDir: true,
    repick:
      opts.port === undefined
        ? async (c) => {
            c.port = await freePort();
          }
        : undefined,
  });
  live.add(server);
  try {
    await server.start();
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

/** Starts all, or none: a failure stops the ones that did start. */
async function startAll<T extends { stop(): Promise<void> }>(starts: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(starts);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!failed) return results.map((r) => (r as PromiseFulfilledResult<T>).value);
  await Promise.all(results.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
  throw failed.reason;
}

function assertCount(name: string, n: number, min: number): void {
  if (!Number.isInteger(n) || n < min || n > 50) {
    throw new RangeError(`${name} must be an integer in ${min}..50, got ${n}`);
  }
}

export async function startMasters(n: number): Promise<RedisServer[]> {
  assertCount('startMasters(n)', n, 1);
  return startAll(Array.from({ length: n }, () => startServer()));
}

export async function startCluster(opts: { masters?: number } = {}): Promise<TestCluster> {
  const masters = opts.masters ?? 3;
  // redis-cli --cluster create refuses fewer than 3 masters.
  assertCount('startCluster({ masters })', masters, 3);
  const clusterDir = makeTmpDir('holdfast-cluster-');
  const startNode = async (index: number): Promise<LocalRedisServer> => {
    const dir = path.join(clusterDir, `node-${index}`);
    // An explicit bus port: the default (port + 10000) overflows 65535 for
    // most ephemeral ports. It stays fixed across restarts (nodes.conf has it).
    const clusterArgs = (busPort: number): string[] => [
      '--cluster-enabled', 'yes',
      '--cluster-config-file', path.join(dir, 'nodes.conf'),
      '--cluster-node-timeout', '2000',
      '--cluster-port', String(busPort),
    ];
    const node = new LocalRedisServer({
      port: await freePort(),
      args: clusterArgs(await freePort()),
      dir,
      ownsDir: false,
      repick: async (c) => {
        c.port = await freePort();
        c.args = clusterArgs(await freePort());
      },
    });
    live.add(node);
    try {
      await node.start();
    } catch (err) {
      await node.stop();
      throw err;
    }
    return node;
  };

  let nodes: LocalRedisServer[] = [];
  const cluster: TestCluster = {
    nodes,
    startupNodes: [],
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      removeTmpDir(clusterDir);
      live.delete(cluster);
    },
  };
  live.add(cluster);
  try {
    nodes = await startAll(Array.from({ length: masters }, (_, i) => startNode(i)));
    cluster.nodes = nodes;
    cluster.startupNodes = nodes.map((n) => ({ host: HOST, port: n.port }));
    await createCluster(nodes);
    await waitClusterOk(nodes);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

function createCluster(nodes: RedisServer[]): Promise<void> {
  const args = ['--cluster', 'create', ...nodes.map((n) => `${HOST}:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'];
  return new Promise((resolve, reject) => {
    execFile('redis-cli', args, { timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`redis-cli --cluster create failed: ${err.message}\n${tail(`${stdout}\n${stderr}`, 20)}`));
      else resolve();
    });
  });
}

/** cluster_state:ok and every node known everywhere, so clients get a complete slot map. */
async function waitClusterOk(nodes: RedisServer[]): Promise<void> {
  const limit = deadline(CLUSTER_READY_TIMEOUT_MS);
  let last = '';
  try {
    while (!limit.expired) {
      const states = await Promise.all(
        nodes.map((n) => rawCommand(n.port, ['CLUSTER', 'INFO'], 1_000).catch((e: Error) => e.message)),
      );
      const ok = states.every(
        (s) => /cluster_state:ok/.test(s) && Number(/cluster_known_nodes:(\d+)/.exec(s)?.[1]) === nodes.length,
      );
      if (ok) return;
      last = states.map((s, i) => `${nodes[i]!.port}: ${/cluster_state:\w+/.exec(s)?.[0] ?? s}`).join(', ');
      await delay(50);
    }
  } finally {
    limit.cancel();
  }
  throw new Error(`cluster not ok within ${CLUSTER_READY_TIMEOUT_MS} ms (${last})`);
}

export async function stopAll(): Promise<void> {
  // In parallel: a cluster's stop() awaits its nodes' (memoized) stops before
  // removing its directory, so the order does not matter.
  await Promise.all([...live].map((s) => s.stop()));
}
