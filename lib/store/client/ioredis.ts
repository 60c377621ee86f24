import type { Arg, CommandPort, MessageListener, PubSubEvents, PubSubPort, RedisClientPort } from './redis-client.js';
import { TickWrites, type Corkable } from './tick-writes.js';
import { listen } from './shared-listeners.js';

/**
 * What holdfast recognises as an ioredis (5, 6) or iovalkey `Redis` or `Cluster` client:
 * the members it checks for, typed loosely on purpose so that any of those versions
 * (and a copy installed twice) is accepted without holdfast's types importing them.
 */
export interface IoredisConnection {
  /** `'ready'`, `'connecting'`, `'reconnecting'`, `'end'`, ... */
  readonly status: string;
  /** Runs a cached script: holdfast's calls, with EVAL on NOSCRIPT. */
  evalsha(...args: never[]): unknown;
  /** Runs (and caches) a script. */
  eval(...args: never[]): unknown;
  /** Makes holdfast's own pub/sub connection, closed by `LockClient.close()`. */
  duplicate(...args: never[]): unknown;
}

type Listener = (...args: never[]) => void;

/** The members the adapter uses, as ioredis and iovalkey have them (Redis and Cluster alike). */
interface Ioredis {
  readonly status: string;
  readonly isCluster?: boolean;
  /** ioredis counts failed connection attempts here (not in its types). */
  readonly retryAttempts?: number;
  evalsha(sha: string, numKeys: number, ...args: Arg[]): Promise<unknown>;
  eval(lua: string, numKeys: number, ...args: Arg[]): Promise<unknown>;
  exists(key: string): Promise<number>;
  hget(key: string, field: string): Promise<string | null>;
  pttl(key: string): Promise<number>;
  info(section: string): Promise<string>;
  wait(replicas: number, timeout: number): Promise<number>;
  script(subcommand: 'LOAD', lua: string): Promise<unknown>;
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  duplicate(...args: unknown[]): IoredisSubscriber;
  /** A Cluster's node connections. */
  nodes?(role: 'all' | 'master'): Ioredis[];
  /** A Redis client's socket (a Cluster has none of its own). */
  readonly stream?: Partial<Corkable> & { readonly writable?: boolean };
  /** Commands written and awaiting their replies (ioredis's internals, in every version holdfast accepts). */
  readonly commandQueue?: { readonly length: number };
  ssubscribe?: unknown;
}

/**
 * The events of holdfast's pub/sub duplicate that tell its breaks. A Redis client: 'close'
 * (then 'reconnecting' per attempt, or 'end' when it gives up), and 'ready' once
 * reconnected, after it has sent its resubscriptions (autoResubscribe). A Cluster: its own
 * 'close'/'end'/'reconnecting' (every node lost), '-node' (a node left, a sharded
 * subscriber's among them: its channels go to the node that serves their slots now), and
 * 'ready', '+node', '+subscriber', 'subscribersReady' as it comes back. A Cluster's
 * plain-pub/sub connection moves to another node without an event of its own: only the
 * Cluster-wide ones tell of it.
 */
const ioredisPubSub = {
  redis: { broken: ['close', 'end', 'reconnecting'], restored: ['ready'] },
  cluster: { broken: ['close', 'end', 'reconnecting', '-node'], restored: ['ready', '+node', '+subscriber', 'subscribersReady'] },
} as const;

interface IoredisSubscriber {
  on(event: string, listener: (channel: string | Buffer, message: string | Buffer) => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  ssubscribe(channel: string): Promise<unknown>;
  sunsubscribe(channel: string): Promise<unknown>;
  disconnect(): void;
}

/** ioredis and iovalkey: resend unanswered commands after a reconnect (autoResendUnfulfilledCommands; a Cluster retries on another connection). */
export class IoredisClient implements RedisClientPort {
  readonly library = 'ioredis';
  readonly isCluster: boolean;
  private readonly c: Ioredis;
  private wasReady: boolean;
  /** undefined for a Cluster: which node's socket a command takes is the Cluster's choice. */
  private readonly writes: TickWrites | undefined;
  private readonly stopReadyWatch: () => void;

  constructor(connection: IoredisConnection) {
    this.c = connection as unknown as Ioredis;
    this.isCluster = this.c.isCluster === true;
    this.wasReady = this.c.status === 'ready';
    this.stopReadyWatch = listen(this.c, 'ready', () => void (this.wasReady = true));
    this.writes = this.isCluster ? undefined : new TickWrites(() => this.busySocket());
  }

  /**
   * The socket ioredis writes commands to now, while commands written to it await their
   * replies (ioredis's commandQueue: its own bookkeeping, not in its types; without it,
   * nothing is coalesced).
   */
  private busySocket(): Corkable | undefined {
    const { stream, commandQueue } = this.c;
    const awaiting = commandQueue?.length ?? 0;
    if (this.c.status !== 'ready' || awaiting === 0 || stream?.writable !== true) return undefined;
    return typeof stream.cork === 'function' && typeof stream.uncork === 'function' ? (stream as Corkable) : undefined;
  }

  close(): void {
    this.stopReadyWatch();
  }

  evalsha(sha: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    this.writes?.beforeSend();
    return this.c.evalsha(sha, keys.length, ...keys, ...args);
  }

  eval(lua: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    this.writes?.beforeSend();
    return this.c.eval(lua, keys.length, ...keys, ...args);
  }

  exists(key: string): Promise<number> {
    return this.c.exists(key);
  }

  hget(key: string, field: string): Promise<string | null> {
    return this.c.hget(key, field);
  }

  pttl(key: string): Promise<number> {
    return this.c.pttl(key);
  }

  info(section: string): Promise<string> {
    return this.c.info(section);
  }

  wait(replicas: number, timeout: number): Promise<number> {
    return this.c.wait(replicas, timeout);
  }

  scriptLoad(sources: readonly string[]): Promise<void> {
    // A Cluster's masters as it knows them now: one it learns of later gets the scripts
    // at its first NOSCRIPT (scripts/preload.ts).
    const nodes = this.isCluster && this.c.nodes ? this.c.nodes('master') : [this.c];
    return Promise.all(nodes.flatMap((node) => sources.map((lua) => node.script('LOAD', lua)))).then(() => undefined);
  }

  /** One connection (a Sentinel-managed one too: ioredis keeps one socket to the primary). */
  pinned<T>(fn: (connection: CommandPort) => Promise<T>): Promise<T> {
    return fn(this);
  }

  get ready(): boolean {
    return this.c.status === 'ready';
  }

  get down(): boolean {
    const s = this.c.status;
    if (s === 'ready') return false;
    if (s === 'end' || s === 'close' || s === 'reconnecting') return true;
    // 'connecting' is also a first connection; after a failure ioredis counts retries.
    return this.wasReady || (this.c.retryAttempts ?? 0) > 0;
  }

  get connecting(): boolean {
    const s = this.c.status;
    return (s === 'connecting' || s === 'connect') && !this.down;
  }

  onBreak(listener: () => void): () => void {
    const c = this.c;
    const stopClose = listen(c, 'close', listener);
    if (!this.isCluster || !c.nodes) return stopClose;
    // A Cluster's node connections close on their own: the Cluster object says nothing.
    const stops = [stopClose];
    const onNode = (node: Ioredis) => void stops.push(listen(node, 'close', listener));
    for (const node of c.nodes('all')) onNode(node);
    stops.push(listen(c, '+node', onNode));
    return () => {
      for (const stop of stops.splice(0)) stop();
    };
  }

  onReady(listener: () => void): () => void {
    return listen(this.c, 'ready', listener);
  }

  subscriber(onMessage: MessageListener, events: PubSubEvents): PubSubPort {
    let s: IoredisSubscriber;
    let shardable = false;
    if (this.isCluster) {
      shardable = typeof this.c.ssubscribe === 'function';
      s = this.c.duplicate([], shardable ? { shardedSubscribers: true } : {});
    } else {
      // No ready check: ioredis sends SUBSCRIBE as soon as the socket connects, before its
      // ready check's INFO, which the server then refuses in subscriber mode; the connection
      // went 'ready' with no subscription at all (seen under CPU load, 1 run in 2).
      s = this.c.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true, lazyConnect: false, enableReadyCheck: false });
    }
    const wake = (channel: string | Buffer, message: string | Buffer) => onMessage(String(channel), String(message));
    s.on('message', wake);
    s.on('smessage', wake);
    // Errors of holdfast's own connection are not the user's to handle: a waiter without
    // wake-ups still retries at the lock's TTL, and the lock calls report the outage.
    s.on('error', () => undefined);
    for (const event of ioredisPubSub[this.isCluster ? 'cluster' : 'redis'].broken) s.on(event, () => events.broken());
    for (const event of ioredisPubSub[this.isCluster ? 'cluster' : 'redis'].restored) s.on(event, () => events.restored());
    return {
      shardable,
      subscribe: async (channel, sharded) => void (await (sharded ? s.ssubscribe(channel) : s.subscribe(channel))),
      unsubscribe: async (channel, sharded) => void (await (sharded ? s.sunsubscribe(channel) : s.unsubscribe(channel))),
      close: () => s.disconnect(),
    };
  }
}
