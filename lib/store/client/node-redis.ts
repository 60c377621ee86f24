import type { Arg, CommandPort, MessageListener, PubSubEvents, PubSubPort, RedisClientPort } from './redis-client.js';
import { sendCommands, type SentCommands } from './send-commands.js';
import { listen } from './shared-listeners.js';

/**
 * What holdfast recognises as a node-redis (`redis` 5 and 6, `@redis/client`) client
 * from `createClient()`, cluster from `createCluster()` or Sentinel-managed primary from
 * `createSentinel()`, connected by the user (`await client.connect()`): the members it
 * checks for, typed loosely on purpose so that holdfast's types import nothing from
 * node-redis.
 */
export interface NodeRedisConnection {
  /** `connect()` was called and the client was not closed. */
  readonly isOpen: boolean;
  /** Connected: commands go out now. */
  readonly isReady: boolean;
  /** How holdfast sends its scripts (EVALSHA, EVAL on NOSCRIPT) and commands. */
  sendCommand(...args: never[]): unknown;
  /** Makes holdfast's own pub/sub connection, closed by `LockClient.close()`. */
  duplicate(...args: never[]): unknown;
  /** Sharded pub/sub (a cluster's waits). */
  SSUBSCRIBE(...args: never[]): unknown;
}

type Listener = (...args: never[]) => void;
type PubSubListener = (message: string, channel: string) => void;

/** The members the adapter uses, as node-redis 5 and 6 have them. */
interface NodeRedis {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  /** A client: sendCommand(args). A cluster: sendCommand(firstKey, isReadonly, args). A Sentinel: sendCommand(isReadonly, args). */
  sendCommand(...args: unknown[]): Promise<unknown>;
  duplicate(): NodeRedisSubscriber;
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  /** Only a cluster has it. */
  nodeClient?: unknown;
  /** Only a Sentinel has them: the primary's address; a leased connection of its pool. */
  getMasterNode?: unknown;
  use?<T>(fn: (lease: { sendCommand(isReadonly: boolean, args: string[]): Promise<unknown> }) => Promise<T>): Promise<T>;
}

/** How the library wants a command sent: the three kinds route differently. */
type Mode = 'client' | 'cluster' | 'sentinel';

interface NodeRedisSubscriber {
  on(event: string, listener: Listener): unknown;
  connect(): Promise<unknown>;
  SUBSCRIBE(channel: string, listener: PubSubListener): Promise<void>;
  UNSUBSCRIBE(channel: string, listener: PubSubListener): Promise<void>;
  SSUBSCRIBE(channel: string, listener: PubSubListener): Promise<void>;
  SUNSUBSCRIBE(channel: string, listener: PubSubListener): Promise<void>;
  destroy?(): unknown;
  disconnect?(): unknown;
}

/** True for a node-redis cluster (createCluster) rather than a client. */
export function isNodeRedisCluster(c: NodeRedisConnection): boolean {
  return typeof (c as unknown as NodeRedis).nodeClient === 'function';
}

/** True for a node-redis Sentinel-managed primary (createSentinel). */
export function isNodeRedisSentinel(c: NodeRedisConnection): boolean {
  const any = c as unknown as NodeRedis;
  return typeof any.getMasterNode === 'function' && typeof any.use === 'function';
}

/** Scripts and WAIT over one way of sending (the client's, or one leased connection's). */
/** What a break looks like per mode; a Sentinel's 'client-error' only when its primary's connection failed. */
const BREAKS: Record<Mode, readonly string[]> = {
  client: ['reconnecting', 'terminated', 'end'],
  cluster: ['node-reconnecting', 'node-disconnect'],
  sentinel: ['reconnecting', 'end', 'client-error'],
};

/**
 * The events of holdfast's pub/sub duplicate that tell its breaks, per mode. A client:
 * 'error' (the socket's, first), 'reconnecting' per attempt, 'end' when closed; 'ready'
 * once reconnected, which node-redis emits after the server confirmed its
 * resubscriptions. A cluster: the same of any of its node connections (its pub/sub
 * connections are among them), as 'node-*'. A Sentinel: its pub/sub connection's errors
 * come as 'error' and it reconnects without an event of its own; 'ready' comes only
 * when the Sentinel itself reconnects.
 */
const PUBSUB_BREAKS: Record<Mode, { readonly broken: readonly string[]; readonly restored: readonly string[] }> = {
  client: { broken: ['error', 'reconnecting', 'end'], restored: ['ready'] },
  cluster: { broken: ['node-error', 'node-reconnecting', 'node-disconnect'], restored: ['node-ready'] },
  sentinel: { broken: ['error', 'reconnecting', 'end'], restored: ['ready'] },
};

/**
 * node-redis clients and clusters. What they do unlike ioredis:
 * - a command written to a connection that breaks is rejected with the socket's error,
 *   never resent (only commands not yet written wait in the offline queue and go out
 *   once after the reconnect); a cluster does not retry it on another node either;
 * - scripts and commands go through sendCommand with string arguments, routed by the
 *   first key in a cluster;
 * - a break shows as 'reconnecting' (or 'terminated'/'end' when it gives up or is
 *   closed), emitted before the commands that were out are rejected: that is the
 *   epoch's signal. holdfast never listens to 'error' on the user's client: a listener
 *   there would change what an unhandled error does in the user's process;
 * - pub/sub takes a listener per channel; holdfast's duplicate is connected by holdfast;
 * - a Sentinel sends each command on a connection of its primary pool: scripts and the
 *   WAIT behind them go through one leased connection (pinned), and its pub/sub follows
 *   a failover on its own (the duplicate is a Sentinel too).
 */
export class NodeRedisClient implements RedisClientPort {
  readonly library = 'node-redis';
  readonly isCluster: boolean;
  private readonly mode: Mode;
  private readonly c: NodeRedis;
  private readonly own: SentCommands;
  private wasReady: boolean;
  /** A reconnect attempt was seen: the first connection failed or broke. */
  private retried = false;
  private readonly stopWatches: readonly (() => void)[];

  constructor(connection: NodeRedisConnection) {
    this.c = connection as unknown as NodeRedis;
    this.isCluster = isNodeRedisCluster(connection);
    this.mode = this.isCluster ? 'cluster' : isNodeRedisSentinel(connection) ? 'sentinel' : 'client';
    this.own = sendCommands((key, args) => this.send(key, args));
    // The user connects a node-redis client before handing it over (`await connect()`),
    // so one that is open but not ready is reconnecting: down now, not in a first
    // connection (a quorum would otherwise wait on it for a restart check it cannot answer).
    this.wasReady = this.c.isReady || this.c.isOpen;
    this.stopWatches = [
      listen(this.c, 'ready', () => void (this.wasReady = true)),
      listen(this.c, this.isCluster ? 'node-reconnecting' : 'reconnecting', () => void (this.retried = true)),
    ];
  }

  close(): void {
    for (const stop of this.stopWatches) stop();
  }

  /** Sends args; in a cluster to the master of `key`'s slot (any node when undefined); a Sentinel's to its primary. */
  private send(key: string | undefined, args: string[]): Promise<unknown> {
    // Open at construction (checked there): closed since, by the user, while holdfast still uses it.
    if (!this.c.isOpen) return Promise.reject(new Error('the node-redis client was closed: close it only after LockClient.close()'));
    if (this.mode === 'cluster') return this.c.sendCommand(key, false, args);
    return this.mode === 'sentinel' ? this.c.sendCommand(false, args) : this.c.sendCommand(args);
  }

  evalsha(sha: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.own.evalsha(sha, keys, args);
  }

  eval(lua: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.own.eval(lua, keys, args);
  }

  async scriptLoad(sources: readonly string[]): Promise<void> {
    const load = (send: (args: string[]) => Promise<unknown>) => Promise.all(sources.map((lua) => send(['SCRIPT', 'LOAD', lua])));
    if (this.mode !== 'cluster') {
      await load((args) => this.send(undefined, args));
      return;
    }
    // Each master as the cluster knows them now: one it learns of later gets the scripts
    // at its first NOSCRIPT (scripts/preload.ts).
    const c = this.c as unknown as { masters: readonly unknown[]; nodeClient(node: unknown): Promise<{ sendCommand(args: string[]): Promise<unknown> }> };
    await Promise.all(c.masters.map(async (master) => {
      const node = await c.nodeClient(master);
      await load((args) => node.sendCommand(args));
    }));
  }

  pinned<T>(fn: (connection: CommandPort) => Promise<T>): Promise<T> {
    // A Sentinel pools its primary connections: lease one for the script and its WAIT.
    if (this.mode === 'sentinel' && this.c.use) return this.c.use((lease) => fn(sendCommands((_key, args) => lease.sendCommand(false, args))));
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

  wait(replicas: number, timeout: number): Promise<number> {
    return this.own.wait(replicas, timeout);
  }

  get ready(): boolean {
    return this.c.isReady;
  }

  /** The user connects a node-redis client before handing it over: never in a first connection here. */
  readonly connecting = false;

  get down(): boolean {
    if (this.c.isReady) return false;
    // Not open: closed by the user (never connected is refused at construction); commands reject at once.
    if (!this.c.isOpen) return true;
    return this.wasReady || this.retried;
  }

  onBreak(listener: () => void): () => void {
    // A Sentinel's 'client-error' comes before the commands out on the failed connection
    // are rejected; only its primary's count (not a replica's or a sentinel's).
    const heard = (e: string) => (e === 'client-error' ? (event?: { type?: string }) => event?.type === 'MASTER' && listener() : listener);
    const stops = BREAKS[this.mode].map((e) => listen(this.c, e, heard(e) as Listener));
    return () => {
      for (const stop of stops) stop();
    };
  }

  onReady(listener: () => void): () => void {
    return listen(this.c, 'ready', listener);
  }

  subscriber(onMessage: MessageListener, events: PubSubEvents): PubSubPort {
    const s = this.c.duplicate();
    // Errors of holdfast's own connection are not the user's to handle (and node-redis
    // throws an 'error' nobody listens to): the Subscriber hears of the break below.
    s.on('error', () => undefined);
    for (const event of PUBSUB_BREAKS[this.mode].broken) s.on(event, () => events.broken());
    for (const event of PUBSUB_BREAKS[this.mode].restored) s.on(event, () => events.restored());
    const connected = s.connect();
    connected.catch(() => undefined);
    const listener: PubSubListener = (message, channel) => onMessage(channel, message);
    // A client queues SUBSCRIBE until it is ready; a cluster must know its slots first,
    // a Sentinel its primary.
    const ready = this.mode === 'client' ? Promise.resolve() : connected;
    // Nothing is sent once closed, even by a call that was waiting for `ready` then: a
    // destroyed node-redis Sentinel still serves (UN)SUBSCRIBE by opening a new
    // connection to its primary (its pub/sub proxy keeps no closed state), which nobody
    // would ever close, and which keeps the process alive reconnecting once the server is gone.
    let closed = false;
    return {
      shardable: this.isCluster,
      subscribe: async (channel, sharded) => {
        await ready;
        if (closed) throw new Error('holdfast: pub/sub connection closed');
        await (sharded ? s.SSUBSCRIBE(channel, listener) : s.SUBSCRIBE(channel, listener));
      },
      unsubscribe: async (channel, sharded) => {
        await ready;
        // Closed, it is subscribed to nothing.
        if (closed) return;
        await (sharded ? s.SUNSUBSCRIBE(channel, listener) : s.UNSUBSCRIBE(channel, listener));
      },
      close: () => {
        closed = true;
        try {
          void Promise.resolve(s.destroy ? s.destroy() : s.disconnect?.()).catch(() => undefined);
        } catch {
          // Already closed.
        }
      },
    };
  }
}
