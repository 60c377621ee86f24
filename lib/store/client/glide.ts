import { LockError } from '../../errors/LockError.js';
import { STRING, type Glide, type Options } from './glide-api.js';
import { GlidePubSub } from './glide-pubsub.js';
import { sendCommands, type SentCommands } from './send-commands.js';
import type { Arg, CommandPort, MessageListener, PubSubEvents, PubSubPort, RedisClientPort } from './redis-client.js';

/**
 * What holdfast recognises as a Valkey GLIDE (`@valkey/valkey-glide`) `GlideClient` or
 * `GlideClusterClient`, as `createClient()` resolves it (connected): the members it
 * checks for, typed loosely on purpose so that holdfast's types import nothing from
 * GLIDE.
 */
export interface GlideConnection {
  /** How holdfast sends its scripts (EVALSHA, EVAL on NOSCRIPT) and commands. */
  customCommand(...args: never[]): unknown;
  /** GLIDE's own script runner (holdfast does not use it: see GlideClient). */
  invokeScript(...args: never[]): unknown;
  /** Only GLIDE has it. */
  getStatistics(): object;
}

/** Duck-typed, so that a copy installed twice is accepted. */
export function isGlide(value: object): value is GlideConnection {
  const c = value as Record<string, unknown>;
  return typeof c.customCommand === 'function' && typeof c.invokeScript === 'function' && typeof c.getStatistics === 'function';
}

/** True for a GlideClusterClient rather than a GlideClient. */
export function isGlideCluster(c: GlideConnection): boolean {
  return typeof (c as unknown as Glide).fcallWithRoute === 'function';
}

/**
 * An error of the connection rather than of the command: GLIDE's ConnectionError (it
 * reconnects by itself), ClosingError (the client was closed) and TimeoutError (its own
 * requestTimeout ran out, the command maybe run all the same).
 */
function failureOf(error: unknown): boolean {
  const name = error instanceof Error ? error.name : '';
  return name === 'ConnectionError' || name === 'ClosingError' || name === 'TimeoutError';
}

/** How often the adapter reads GLIDE's count of open connections (a local read, no round trip). */
const CONNECTIONS_CHECK = 50;
/**
 * Bound of one probe (PING) of a connection suspected broken (GLIDE's default request
 * timeout: a command sent while it reconnects waits until then), and the pause between
 * failed probes.
 */
const PROBE_TIMEOUT = 250;
const PROBE_PAUSE = 100;

/**
 * Valkey GLIDE clients (2.3 and later: earlier ones cannot subscribe at run time, which
 * holdfast's waits need, and are refused). What they do unlike ioredis and node-redis:
 * - commands go through customCommand, scripts as EVALSHA (EVAL on NOSCRIPT, which GLIDE
 *   reports as its own 'NoScriptError': rethrown here as the server's 'NOSCRIPT ...' so
 *   that the Script falls back as with the other libraries). Not invokeScript: it hides
 *   the EVALSHA/EVAL round trips, which Script and the quorum's restore count on;
 * - a cluster client routes each script to the master of its first key's slot
 *   (primarySlotKey), INFO to any node;
 * - a command out when the connection breaks is rejected at once with a ConnectionError,
 *   never resent; one sent while the server is away waits (GLIDE reconnects by itself)
 *   until GLIDE's requestTimeout (default 250 ms) rejects it with a TimeoutError, maybe
 *   after it ran;
 * - GLIDE emits no connection events. A command rejected with a ConnectionError or
 *   TimeoutError counts as a break: onBreak moves before that rejection settles, and the
 *   connection is down until a probe (PING, every PROBE_PAUSE ms) is answered, which
 *   moves onReady. GLIDE's count of open connections (process-wide: it cannot tell whose)
 *   is read every CONNECTIONS_CHECK ms; when it drops, every GLIDE adapter probes its
 *   connection and moves onReady once answered, so that a master restarted while no
 *   command of holdfast's was out is still checked (quorum mode's RestartWatch). A
 *   restart whose reconnect is hidden in that count by other connections opening in the
 *   same CONNECTIONS_CHECK goes unseen here; quorum mode still finds it, by the
 *   client's mark the restart wiped (acquire.lua, RestartWatch.met);
 * - GLIDE has no duplicate(): holdfast's pub/sub connection is a new client of the same
 *   class made from the configuration the user's was created with (kept by GLIDE on the
 *   client), with a message callback of holdfast's (glide-pubsub.ts). Its breaks are found
 *   by asking it every SUBSCRIPTION_CHECK ms whether the server still has what it confirmed (GLIDE
 *   resubscribes by itself).
 */
export class GlideClient implements RedisClientPort {
  readonly library = 'glide';
  readonly isCluster: boolean;
  private readonly c: Glide;
  /** A command failed with its connection and no probe was answered since. */
  private broken = false;
  private probing = false;
  private closed = false;
  private connections: number;
  private readonly watch: ReturnType<typeof setInterval>;
  private readonly breaks = new Set<() => void>();
  private readonly readies = new Set<() => void>();
  private readonly own: SentCommands = sendCommands((key, args) => this.send(key, args));

  constructor(connection: GlideConnection) {
    this.c = connection as unknown as Glide;
    this.isCluster = isGlideCluster(connection);
    if (typeof this.c.subscribe !== 'function') {
      throw new LockError('this Valkey GLIDE client cannot subscribe at run time, which holdfast waits need: use @valkey/valkey-glide 2.3 or later');
    }
    if (typeof this.c.config !== 'object' || this.c.config === null) {
      throw new LockError('this Valkey GLIDE client keeps no configuration to open holdfast pub/sub connection from: use @valkey/valkey-glide 2.3 or later');
    }
    this.connections = this.openConnections();
    // A connection already broken when handed over is found by this first probe.
    this.probe(false);
    this.watch = setInterval(() => {
      const open = this.openConnections();
      if (open < this.connections) this.probe(false);
      this.connections = open;
    }, CONNECTIONS_CHECK);
    this.watch.unref();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.watch);
    this.breaks.clear();
    this.readies.clear();
  }

  /** GLIDE's count of open connections, process-wide. */
  private openConnections(): number {
    return Number((this.c.getStatistics() as { total_connections?: unknown }).total_connections ?? 0);
  }

  /**
   * PINGs until answered, then moves onReady. `broken`: the connection is known to have
   * failed; else it is only suspected, and counts as broken once a probe fails.
   */
  private probe(broken: boolean): void {
    if (this.probing || this.closed) return;
    this.probing = true;
    const attempt = (): void => {
      if (this.closed || this.c.isClosed === true) return void (this.probing = false);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('probe unanswered')), PROBE_TIMEOUT)));
      Promise.race([this.c.customCommand(['PING'], { decoder: STRING, ...(this.isCluster ? { route: 'randomNode' as const } : {}) }), bound]).then(
        () => {
          clearTimeout(timer);
          this.probing = false;
          this.broken = false;
          if (!this.closed) for (const l of [...this.readies]) l();
        },
        () => {
          clearTimeout(timer);
          if (!this.broken) {
            this.broken = true;
            for (const l of [...this.breaks]) l();
          }
          setTimeout(attempt, PROBE_PAUSE).unref();
        },
      );
    };
    this.broken ||= broken;
    attempt();
  }

  /** Sends args (to the master of `key`'s slot in a cluster; any node when undefined); a failure of the connection is a break. */
  private send(key: string | undefined, args: string[]): Promise<unknown> {
    const options: Options = { decoder: STRING };
    if (this.isCluster) options.route = key === undefined ? 'randomNode' : { type: 'primarySlotKey', key };
    return this.c.customCommand(args, options).catch((error: unknown) => {
      if (failureOf(error)) {
        for (const l of [...this.breaks]) l();
        this.probe(true);
      }
      throw error;
    });
  }

  async evalsha(sha: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    try {
      return await this.own.evalsha(sha, keys, args);
    } catch (error) {
      // GLIDE names the server's NOSCRIPT reply its own way; Script looks for the server's word.
      if (error instanceof Error && /\bNoScriptError\b/.test(error.message)) throw new Error(`NOSCRIPT ${error.message}`, { cause: error });
      throw error;
    }
  }

  eval(lua: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.own.eval(lua, keys, args);
  }

  /** GLIDE multiplexes one connection per node: a script and the WAIT behind it share it. */
  pinned<T>(fn: (connection: CommandPort) => Promise<T>): Promise<T> {
    return fn(this);
  }

  exists(key: string): Promise<number> {
    return this.own.exists(key);
  }

  hget(key: string, field: string): Promise<string | null> {
    return this.own.hget(key, field);
  }

  pttl(key: string): Promise<number> {
    return this.own.pttl(key);
  }

  info(section: string): Promise<string> {
    return this.own.info(section);
  }

  async scriptLoad(sources: readonly string[]): Promise<void> {
    // A cluster: on every primary (GLIDE's route for it). Not through send(): a load is
    // no call of the store's, and its failure is no break.
    const options: Options = { decoder: STRING };
    if (this.isCluster) options.route = 'allPrimaries';
    await Promise.all(sources.map((lua) => this.c.customCommand(['SCRIPT', 'LOAD', lua], options)));
  }

  wait(replicas: number, timeout: number): Promise<number> {
    return this.own.wait(replicas, timeout);
  }

  get ready(): boolean {
    return !this.down;
  }

  /** GLIDE's client is connected when it is made (createClient resolves once it is). */
  readonly connecting = false;

  get down(): boolean {
    return this.broken || this.c.isClosed === true;
  }

  onBreak(listener: () => void): () => void {
    const l = () => listener();
    this.breaks.add(l);
    return () => void this.breaks.delete(l);
  }

  onReady(listener: () => void): () => void {
    const l = () => listener();
    this.readies.add(l);
    return () => void this.readies.delete(l);
  }

  subscriber(onMessage: MessageListener, events: PubSubEvents): PubSubPort {
    return new GlidePubSub(this.c, this.isCluster, onMessage, events);
  }
}

