import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import { checkConnections, clientPort, isCluster, type Connection } from './connection.js';
import { Engine } from './engine/engine.js';
import { EventHub } from './engine/event-hub.js';
import { HoldRegistry } from './engine/registry.js';
import type { ClientEvents } from './events.js';
import { LockHandle } from './primitives/lock/handle.js';
import { ownerPrefix } from './handles/owner-id.js';
import type { LockPort } from './handles/port.js';
import { makePort } from './port-wiring.js';
import type { Lock } from './handles/types.js';
import { MultiLockHandle } from './primitives/multi/handle.js';
import { checkNames } from './primitives/multi/names.js';
import type { MultiLock } from './primitives/multi/types.js';
import { checkLimit, SemaphoreHandle } from './primitives/semaphore/handle.js';
import type { Semaphore } from './primitives/semaphore/types.js';
import { ReadWriteLockHandle } from './primitives/read-write/handle.js';
import type { ReadWriteLock } from './primitives/read-write/types.js';
import { readWriteLocks } from './primitives/read-write/read-write.js';
import { checkName, commandBound, describe, resolveClientOptions, type ClientOptions, type ResolvedOptions } from './options.js';
import { locks } from './primitives/lock/locks.js';
import type { Topology } from './primitives/primitive.js';
import { semaphores } from './primitives/semaphore/semaphore.js';
import { newScope, runInScope } from './scope.js';
import { MasterStore } from './store/master/master.js';
import { QuorumStore } from './store/quorum/quorum.js';
import type { Store } from './store/types.js';
import { Watchdog } from './watchdog/watchdog.js';

// The composition root: wires a store for the topology, the watchdog and the engine,
// and hands out Lock handles that reach them through a narrow port (handles/port.ts).

/**
 * Entry point: one per process (or per Redis topology). Hands out cheap {@link Lock}
 * handles over the connection(s) it was given, renews held locks (one watchdog timer
 * per client) and reports what happens to them as events.
 *
 * Events: every lock's events (see {@link ClientEvents}), and `error` for trouble in
 * the background; with no `error` listener that becomes a process warning.
 *
 * Connections: holdfast sends its calls on the connection you give it and never closes
 * it. The first time a call has to wait, it opens one more per master for pub/sub,
 * `connection.duplicate()` (for a Cluster, a duplicate Cluster client with its own
 * connections to the nodes), and keeps it until {@link LockClient.close}.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { LockClient } from 'holdfast';
 *
 * const redis = new Redis();
 * const locks = new LockClient(redis, { watchdogTimeout: 10_000 });
 * await locks.getLock('order:42').run(async ({ token }) => {
 *   // ...
 * });
 * await locks.close();
 * redis.disconnect();
 * ```
 */
export class LockClient extends EventEmitter<ClientEvents> {
  // 72 random bits in 12 characters: owner ids (host:pid:id:scope) go out with every
  // lock and unlock call, and each byte is written and parsed on both sides.
  /** Random per client: part of every owner id it writes (`host:pid:clientId:scope`). */
  readonly id: string = randomBytes(9).toString('base64url');
  private readonly options: ResolvedOptions;
  private readonly store: Store;
  private readonly engine: Engine;
  private readonly port: LockPort;
  /** What each primitive's folder builds its primitives from (see use()). */
  private readonly topology: Topology;
  /** Each folder's primitives, by the function that built them from the topology. */
  private readonly built = new Map<(topology: Topology) => unknown, unknown>();
  private closing: Promise<void> | undefined;

  /**
   * Checks its arguments and sets up. Quorum mode asks each master for `INFO server`
   * (to tell a restarted master); otherwise nothing is sent until a lock is used.
   *
   * @param connection an ioredis or iovalkey `Redis` (one master, also Sentinel-managed) or
   *   `Cluster`, a connected node-redis client (`createClient()`), cluster
   *   (`createCluster()`) or Sentinel (`createSentinel()`), or an array of independent
   *   masters (quorum mode: a lock needs a majority).
   *   holdfast never closes them.
   * @param options see {@link ClientOptions}.
   * @throws `TypeError` when `connection` is none of those clients, or the array is empty,
   *   holds a Cluster or the same client twice; or an option is unknown or mistyped.
   * @throws `RangeError` when an option is out of range (e.g. `watchdogTimeout` under 100 ms).
   * @example
   * ```ts
   * const locks = new LockClient(new Redis());                      // one master
   * const quorum = new LockClient([r1, r2, r3], { driftFactor: 0.01 }); // independent masters
   * const cluster = new LockClient(new Cluster([{ host: '10.0.0.1', port: 6379 }]));
   * ```
   */
  constructor(connection: Connection | readonly Connection[], options?: ClientOptions) {
    super();
    const connections = checkConnections(connection);
    this.options = resolveClientOptions(options);
    const { watchdogTimeout, commandTimeout, driftFactor, keyRetention, syncReplicas } = this.options;
    // WAIT has no key: a Cluster would send it to any node, not to the one that took the write.
    if (syncReplicas && connections.some(isCluster)) throw new TypeError('options.syncReplicas is not supported with a Cluster: WAIT cannot be routed to the node of a lock');
    const holds = new HoldRegistry();
    const timeoutFor = (lease: number) => commandBound(lease, commandTimeout);
    const report = (error: Error) => this.engine.error(error);
    const masters = connections.map((c) => new MasterStore(clientPort(c, timeoutFor(watchdogTimeout), report), holds, keyRetention, syncReplicas));
    this.store = Array.isArray(connection)
      ? new QuorumStore(
          masters,
          driftFactor,
          // Longer than the longest lease a holder could still believe in, with room for
          // its timers firing late on a busy machine (Redlock: restart delay > max TTL).
          watchdogTimeout + Math.max(100, watchdogTimeout / 4),
          `${this.options.keyPrefix}met:${this.id}`,
          (error) => this.engine.error(error),
        )
      : masters[0];
    // A bound of one Redis call: a third of the lease, 100 ms to 1 s, so that one
    // attempt against an unreachable Redis settles within a second by default.
    const events = new EventHub(this);
    const watchdog = new Watchdog(
      this.store,
      {
        renewed: (hold) => events.publish('renewed', hold.keys.name, () => ({ name: hold.keys.name, owner: hold.owner, kind: hold.primitive.kind, leaseTime: hold.lease })),
        renewalFailed: (hold, error, attempt) => events.publish('renewalFailed', hold.keys.name, () => ({ name: hold.keys.name, owner: hold.owner, kind: hold.primitive.kind, error, attempt })),
      },
      timeoutFor,
    );
    this.engine = new Engine(this.store, watchdog, events, { watchdogTimeout, timeoutFor }, holds);
    this.topology = { store: this.store, master: Array.isArray(connection) ? undefined : masters[0], heartbeat: watchdogTimeout };
    this.port = makePort({ engine: this.engine, store: this.store, events, queryTimeout: timeoutFor(watchdogTimeout), keyPrefix: this.options.keyPrefix, ownerPrefix: ownerPrefix(this.id) });
  }

  /**
   * A handle on the reentrant lock called `name`; cheap, any number per name, and
   * nothing is sent to Redis.
   *
   * @param name 1 to 1024 characters; it becomes the key's hash tag (`holdfast:{name}`).
   * @throws {@link LockError} when the client is closed.
   * @throws `TypeError` when `name` is not a string; `RangeError` when it is empty or too long.
   * @example
   * ```ts
   * const lock = locks.getLock(`order:${id}`);
   * await lock.run(() => reserveStock(id));
   * ```
   */
  getLock(name: string): Lock {
    this.engine.assertOpen();
    return new LockHandle(this.port, checkName(name), this.use(locks).lock);
  }

  /**
   * A handle on a fair lock: the same API as getLock, granted strictly in request order
   * across processes (a queue in Redis). On one master or a Cluster getLock waits in the
   * same queue with no barging, so one name may be taken through either; the fair lock
   * refuses quorum mode, where getLock waits in its clients.
   *
   * @param name 1 to 1024 characters.
   * @throws {@link LockError} when the client is closed, or is in quorum mode (no queue there).
   * @throws `TypeError` when `name` is not a string; `RangeError` when it is empty or too long.
   * @example
   * ```ts
   * const turn = locks.getFairLock('printer');
   * await turn.run(() => print(job)); // served in the order the calls reached Redis
   * ```
   */
  getFairLock(name: string): Lock {
    this.engine.assertOpen();
    checkName(name);
    // Throws the reason up front when the topology has no queue (quorum mode).
    return new LockHandle(this.port, name, this.use(locks).fair());
  }

  /**
   * A handle on several locks taken together, all or nothing: the Lock API over the
   * names (see {@link MultiLock}). The names are taken in one global order (sorted), so
   * multi-locks over overlapping names never deadlock whatever order they were given
   * in; they may sit in different Cluster slots; in quorum mode each name is a quorum
   * lock. Cheap, and nothing is sent to Redis.
   *
   * @param names 1 or more distinct lock names (each as for {@link LockClient.getLock}).
   * @throws {@link LockError} when the client is closed.
   * @throws `TypeError` when `names` is not an array or holds a non-string; `RangeError`
   *   when it is empty, repeats a name, or holds an empty or too long name.
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * await both.run(async ({ signal, tokens }) => {
   *   await work(signal);
   *   await ledger.write(entry, tokens['account:1']);
   * }, { waitTime: 5_000 });
   * ```
   */
  getMultiLock(names: readonly string[]): MultiLock {
    this.engine.assertOpen();
    const { given, ordered } = checkNames(names);
    return new MultiLockHandle(this.port, given, ordered, this.use(locks).multi);
  }

  /**
   * A counting semaphore (see {@link Semaphore}): at most `limit` permits (an integer,
   * the same in every client of `name`) held at once. Cheap; nothing is sent.
   *
   * @throws {@link LockError} when the client is closed, or in quorum mode or with syncReplicas.
   * @throws `TypeError`/`RangeError` when `name` or `limit` is invalid.
   * @example
   * ```ts
   * await locks.getSemaphore('api:quota', 10).run(({ signal }) => render(signal), { permits: 2 });
   * ```
   */
  getSemaphore(name: string, limit: number): Semaphore {
    this.engine.assertOpen();
    return new SemaphoreHandle(this.port, checkName(name), checkLimit(limit), this.use(semaphores));
  }

  /**
   * A handle on a read-write lock: any number of readers or one writer, each side the
   * Lock API (see {@link ReadWriteLock}). One master or a Cluster; cheap, and nothing is
   * sent to Redis.
   *
   * @param name 1 to 1024 characters; its keys share the hash tag `{name}`.
   * @throws {@link LockError} when the client is closed, in quorum mode, or with `syncReplicas`.
   * @throws `TypeError` when `name` is not a string; `RangeError` when it is empty or too long.
   * @example
   * ```ts
   * const doc = locks.getReadWriteLock(`doc:${id}`);
   * const page = await doc.readLock().run(({ signal }) => render(signal)); // readers share
   * await doc.writeLock().run(({ token }) => store.write(entry, token));   // one writer, no reader
   * ```
   */
  getReadWriteLock(name: string): ReadWriteLock {
    this.engine.assertOpen();
    return new ReadWriteLockHandle(this.port, name, this.use(readWriteLocks)(this.port.keysOf(checkName(name))));
  }

  /**
   * Runs `fn` in a new owner scope: everything `fn` awaits is one owner, so nested
   * `lock()`/`run()` calls on a lock the scope holds reenter instead of waiting, and
   * `unlock()` from a scope that does not hold the lock rejects with LockNotHeldError. Scopes are process-wide: one
   * opened here is a scope for every LockClient. Wrap each request (or job) in one.
   *
   * @returns what `fn` returns, as it is (a promise if `fn` is async).
   * @throws `TypeError` when `fn` is not a function; else whatever `fn` throws.
   * @example
   * ```ts
   * app.use((req, res, next) => locks.scope(next)); // each request is its own owner
   * ```
   */
  scope<T>(fn: () => T): T {
    if (typeof fn !== 'function') throw new TypeError(`scope(fn): fn must be a function, got ${describe(fn)}`);
    return runInScope(newScope(), fn);
  }

  /**
   * Stops the watchdog (held locks expire at the end of their lease), takes this client
   * off the queues its waits joined (each leave bounded by a command timeout), drops its
   * subscriptions on the server (bounded by 1 s; not asked when the server is down),
   * rejects pending waits with a LockError, and closes the pub/sub connection it opened.
   * The user's connections stay open: close them after. Afterwards getLock
   * throws, and the handles' calls reject, with a LockError. Calling it again returns
   * the same promise; it does not reject.
   *
   * @example
   * ```ts
   * process.once('SIGTERM', async () => {
   *   await locks.close();
   *   await redis.quit();
   * });
   * ```
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.engine.close();
      await this.store.close();
    })();
    return this.closing;
  }

  /**
   * A primitive folder's primitives, built from the topology on the first getter that
   * needs them and kept for the client's life: they share their store calls (one
   * ExactlyOnce each, closed with the store) across every handle. A build that throws
   * (a primitive the topology refuses) is not kept, so each getter throws it.
   */
  private use<T>(build: (topology: Topology) => T): T {
    let made = this.built.get(build) as T | undefined;
    if (made === undefined) this.built.set(build, (made = build(this.topology)));
    return made;
  }

  /** {@link LockClient.close} was called. */
  get isClosed(): boolean {
    return this.engine.closed;
  }
}
