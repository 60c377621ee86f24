import type { Arg, MessageListener, PubSubPort, RedisClientPort } from './redis-client.js';

/**
 * What holdfast recognises as a node-redis (`redis` 5 and 6, `@redis/client`) client
 * from `createClient()` or cluster from `createCluster()`, connected by the user
 * (`await client.connect()`): the members it checks for, typed loosely on purpose so
 * that holdfast's types import nothing from node-redis.
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
  /** A client: sendCommand(args). A cluster: sendCommand(firstKey, isReadonly, args). */
  sendCommand(...args: unknown[]): Promise<unknown>;
  duplicate(): NodeRedisSubscriber;
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  /** Only a cluster has it. */
  nodeClient?: unknown;
}

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
 * - pub/sub takes a listener per channel; holdfast's duplicate is connected by holdfast.
 */
export class NodeRedisClient implements RedisClientPort {
  readonly library = 'node-redis';
  readonly isCluster: boolean;
  private readonly c: NodeRedis;
  private wasReady: boolean;
  /** A reconnect attempt was seen: the first connection failed or broke. */
  private retried = false;
  private readonly onReadyOnce = () => {
    this.wasReady = true;
  };
  private readonly onRetry = () => {
    this.retried = true;
  };

  constructor(connection: NodeRedisConnection) {
    this.c = connection as unknown as NodeRedis;
    this.isCluster = isNodeRedisCluster(connection);
    // The user connects a node-redis client before handing it over (`await connect()`),
    // so one that is open but not ready is reconnecting: down now, not in a first
    // connection (a quorum would otherwise wait on it for a restart check it cannot answer).
    this.wasReady = this.c.isReady || this.c.isOpen;
    this.c.on('ready', this.onReadyOnce);
    this.c.on(this.isCluster ? 'node-reconnecting' : 'reconnecting', this.onRetry);
  }

  close(): void {
    this.c.off('ready', this.onReadyOnce);
    this.c.off(this.isCluster ? 'node-reconnecting' : 'reconnecting', this.onRetry);
  }

  /** Sends args; in a cluster to the master of `key`'s slot (any node when undefined). */
  private send(key: string | undefined, args: string[]): Promise<unknown> {
    return this.isCluster ? this.c.sendCommand(key, false, args) : this.c.sendCommand(args);
  }

  evalsha(sha: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.send(keys[0], ['EVALSHA', sha, String(keys.length), ...keys, ...args.map(String)]);
  }

  eval(lua: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.send(keys[0], ['EVAL', lua, String(keys.length), ...keys, ...args.map(String)]);
  }

  async exists(key: string): Promise<number> {
    return Number(await this.send(key, ['EXISTS', key]));
  }

  async hget(key: string, field: string): Promise<string | null> {
    const v = await this.send(key, ['HGET', key, field]);
    return v === null || v === undefined ? null : String(v);
  }

  async pttl(key: string): Promise<number> {
    return Number(await this.send(key, ['PTTL', key]));
  }

  async info(section: string): Promise<string> {
    return String(await this.send(undefined, ['INFO', section]));
  }

  async wait(replicas: number, timeout: number): Promise<number> {
    return Number(await this.send(undefined, ['WAIT', String(replicas), String(timeout)]));
  }

  get ready(): boolean {
    return this.c.isReady;
  }

  get down(): boolean {
    if (this.c.isReady) return false;
    // Not open: closed by the user (or never connected), commands reject at once.
    if (!this.c.isOpen) return true;
    return this.wasReady || this.retried;
  }

  onBreak(listener: () => void): () => void {
    const events = this.isCluster ? ['node-reconnecting', 'node-disconnect'] : ['reconnecting', 'terminated', 'end'];
    for (const e of events) this.c.on(e, listener);
    return () => {
      for (const e of events) this.c.off(e, listener);
    };
  }

  onReady(listener: () => void): () => void {
    this.c.on('ready', listener);
    return () => void this.c.off('ready', listener);
  }

  subscriber(onMessage: MessageListener): PubSubPort {
    const s = this.c.duplicate();
    // Errors of holdfast's own connection are not the user's to handle (and node-redis
    // throws an 'error' nobody listens to): waiters fall back to the lock's TTL.
    s.on('error', () => undefined);
    const connected = s.connect();
    connected.catch(() => undefined);
    const listener: PubSubListener = (message, channel) => onMessage(channel, message);
    // A client queues SUBSCRIBE until it is ready; a cluster must know its slots first.
    const ready = this.isCluster ? connected : Promise.resolve();
    return {
      shardable: this.isCluster,
      subscribe: async (channel, sharded) => {
        await ready;
        await (sharded ? s.SSUBSCRIBE(channel, listener) : s.SUBSCRIBE(channel, listener));
      },
      unsubscribe: async (channel, sharded) => {
        await ready;
        await (sharded ? s.SUNSUBSCRIBE(channel, listener) : s.UNSUBSCRIBE(channel, listener));
      },
      close: () => {
        try {
          void Promise.resolve(s.destroy ? s.destroy() : s.disconnect?.()).catch(() => undefined);
        } catch {
          // Already closed.
        }
      },
    };
  }
}
