/**
 * One redis-server process on 127.0.0.1: started from the binary on PATH, tracked
 * (tracking.ts), stopped, killed, paused and restarted by the tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { HOST, assertUsablePort, freePort } from './ports';
import { rawCommand } from './resp';
import { deadline, delay, readTail, tail } from './timing';
import type { ServerClock } from './clock';
import type { RedisServer, ServerOptions } from './types';
export type { RedisServer, ServerOptions } from './types';
import { hostProcess, live, makeTmpDir, registry, removeTmpDir, trackPid, untrackPid } from './tracking';

const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const PORT_RETRIES = 5;

class PortInUseError extends Error {}

export interface ServerConfig {
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
  /** Persist every write before acknowledging it (appendonly, appendfsync always): a restart keeps the data. */
  aof?: boolean;
  /** A wall clock the test can step (clock.ts); kept across restarts. */
  clock?: ServerClock;
  /**
   * Present when the ports came from freePort(): after a collision with
   * another process on the first start, picks new ones (restarts never move).
   */
  repick?: (config: ServerConfig) => Promise<void>;
}

export class LocalRedisServer implements RedisServer {
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
  get logFile(): string {
    return path.join(this.config.dir, 'redis.log');
  }

  /** First start: a port collision with another process moves to a fresh port. */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launch({ freshLog: true });
        return;
      } catch (err) {
        if (!(err instanceof PortInUseError) || !this.config.repick || attempt >= PORT_RETRIES) throw err;
        await this.config.repick(this.config);
      }
    }
  }

  /** `freshLog`: a first start empties redis.log; a restart appends to it (a chaos run keeps one history per server). */
  private async launch({ freshLog }: { freshLog: boolean }): Promise<void> {
    fs.mkdirSync(this.config.dir, { recursive: true });
    // "Empty data" on restart even if someone configured persistence through args.
    if (!this.config.aof) {
      for (const f of ['dump.rdb', 'appendonly.aof', 'appendonlydir']) {
        fs.rmSync(path.join(this.config.dir, f), { recursive: true, force: true });
      }
    }
    if (freshLog) fs.rmSync(this.logFile, { force: true });
    const configFile = path.join(this.config.dir, 'redis.conf');
    // Written once: Sentinel rewrites it with what it learned, which a restart keeps.
    if (this.config.config !== undefined && !fs.existsSync(configFile)) fs.writeFileSync(configFile, this.config.config);
    const args = [
      ...(this.config.config === undefined ? [] : [configFile]),
      '--port', String(this.config.port),
      '--bind', HOST,
      '--save', '',
      ...(this.config.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
      '--daemonize', 'no',
      '--dir', this.config.dir,
      '--logfile', this.logFile,
      ...this.config.args,
    ];
    // Not detached: a Ctrl-C on the terminal reaches redis-server too, so an
    // interrupted run cannot leave servers behind.
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'], env: this.config.clock?.env() });
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
    await this.launch({ freshLog: false }); // same port: a collision here is a real error
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

export async function startServer(opts: ServerOptions = {}): Promise<RedisServer> {
  if (opts.port !== undefined) assertUsablePort(opts.port);
  // Later arguments win in redis-server: these would bypass the port and address rules.
  const owned = (opts.args ?? []).find((a) => /^--(port|bind|unixsocket)$/i.test(a));
  if (owned) throw new RangeError(`args must not set ${owned}: use opts.port (the address is always 127.0.0.1)`);
  const server = new LocalRedisServer({
    port: opts.port ?? (await freePort()),
    args: [...(opts.args ?? [])],
    config: opts.config,
    aof: opts.aof,
    clock: opts.clock,
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