/** What a test's redis-server looks like to its users (server.ts starts one). */
import type { ServerClock } from './clock';

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
   * Starts again on the same port with EMPTY data (nothing is persisted), or, started
   * with `aof`, with every write it acknowledged (appendfsync always).
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
  /** Its log: one history across restarts (a first start empties it). */
  readonly logFile: string;
}

export interface ServerOptions {
  port?: number;
  args?: string[];
  config?: string;
  /** Every acknowledged write survives a restart (see RedisServer.restart). */
  aof?: boolean;
  /** A steppable wall clock (clock.ts). */
  clock?: ServerClock;
}
