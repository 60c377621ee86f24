/** A script or command argument as the store sends it (adapters turn numbers into strings where the client wants them). */
export type Arg = string | number;

/** Called with every message on a channel holdfast's pub/sub connection is subscribed to. */
export type MessageListener = (channel: string, message: string) => void;

/**
 * What the adapter tells of its pub/sub connection's state, as the client library shows
 * it: `broken` when the connection closed or reconnects (messages published from then
 * on are lost; it may come several times per break, once per event or reconnect
 * attempt), `restored` when it is ready again after a break. The library resubscribes
 * by itself; the Subscriber subscribes again all the same (see Subscriber.restored).
 */
export interface PubSubEvents {
  broken(): void;
  restored(): void;
}

/**
 * holdfast's own pub/sub connection, a duplicate of the user's: opened by
 * {@link RedisClientPort.subscriber}, closed only by {@link PubSubPort.close}.
 */
export interface PubSubPort {
  /**
   * Whether SSUBSCRIBE is tried first (a Cluster whose client library knows it). The
   * Subscriber drops to plain SUBSCRIBE for good when the server has no sharded pub/sub.
   */
  readonly shardable: boolean;
  /** Resolves once the server confirmed the subscription. */
  subscribe(channel: string, sharded: boolean): Promise<void>;
  unsubscribe(channel: string, sharded: boolean): Promise<void>;
  /**
   * Closes at once (no QUIT: a dead server must not hold it up); never the user's
   * connection. Afterwards nothing is sent, not even by a call made before it that is
   * still waiting to be sent (it settles without opening anything).
   */
  close(): void;
}

/** The commands a pinned connection offers (RedisClientPort.pinned). */
export type CommandPort = Pick<RedisClientPort, 'evalsha' | 'eval' | 'wait'>;

/**
 * Everything the store asks of one connection (a master or a Cluster), whatever the
 * client library: one adapter per library (ioredis.ts, node-redis.ts, glide.ts) makes its client
 * look like this, and nothing under store/ talks to a client library directly.
 *
 * Resends: what a library does with a command whose connection broke before the reply
 * differs (ioredis resends it, node-redis rejects it); the store's exactly-once rules
 * (master/exactly-once.ts) hold for both, given that every break moves onBreak.
 */
export interface RedisClientPort {
  /** For messages and the store's choices that depend on the library. */
  readonly library: 'ioredis' | 'node-redis' | 'glide';
  /** A Cluster client: scripts are routed by their first key; waits use sharded pub/sub. */
  readonly isCluster: boolean;
  /** EVALSHA; rejects with the server's NOSCRIPT error when it lacks the script (Script falls back to EVAL). */
  evalsha(sha: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown>;
  /** EVAL: also caches the script on the server. */
  eval(lua: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown>;
  /** SCRIPT LOAD of each source on every master (a Cluster's: each master it knows now). */
  scriptLoad(sources: readonly string[]): Promise<void>;
  /** EXISTS key: 1 or 0. */
  exists(key: string): Promise<number>;
  /** HGET key field. */
  hget(key: string, field: string): Promise<string | null>;
  /** PTTL key. */
  pttl(key: string): Promise<number>;
  /** INFO section, as the text the server sends. */
  info(section: string): Promise<string>;
  /** WAIT numreplicas timeout: replicas that acknowledged every write before it (option syncReplicas). */
  wait(replicas: number, timeout: number): Promise<number>;
  /**
   * Runs fn with every command it sends on one and the same server connection: WAIT
   * counts the acknowledgements of the writes of its own connection only, so a script
   * and the WAIT behind it must share one (a pooled client would otherwise answer WAIT
   * for a connection that wrote nothing). A single connection just calls fn with itself.
   */
  pinned<T>(fn: (connection: CommandPort) => Promise<T>): Promise<T>;
  /** Commands go out now (not into an offline queue). */
  readonly ready: boolean;
  /**
   * True while the connection is not ready after having been (or after a failed first
   * try): a command would only wait in the library's offline queue, so quorum mode
   * counts the master out at once, and a restart check ('ready', then INFO) could not
   * keep a command queued now away from a restarted server.
   */
  readonly down: boolean;
  /**
   * In its first connection, which the library makes by itself and meanwhile queues
   * commands for (ioredis connecting; not lazyConnect's 'wait', which only a command
   * starts, nor a node-redis client, which the user connects before handing it over).
   */
  readonly connecting: boolean;
  /**
   * Calls listener on every break of the connection (a Cluster's: of any node's), before
   * the commands that were out on it are rejected or resent. Returns the unsubscriber.
   */
  onBreak(listener: () => void): () => void;
  /** Calls listener each time the connection becomes ready. Returns the unsubscriber. */
  onReady(listener: () => void): () => void;
  /** A new pub/sub connection of holdfast's own, duplicated from this one, reporting its breaks to `events`. */
  subscriber(onMessage: MessageListener, events: PubSubEvents): PubSubPort;
  /** Removes what the adapter itself listens to on the user's connection (which stays open). */
  close(): void;
}
