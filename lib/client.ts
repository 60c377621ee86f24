import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import { checkConnections, type Connection } from './connection.js';
import { Engine } from './engine/engine.js';
import { EventHub } from './engine/event-hub.js';
import type { ClientEvents } from './events.js';
import { LockHandle } from './handles/lock.js';
import { ownerPrefix } from './handles/owner-id.js';
import type { LockPort } from './handles/port.js';
import type { Lock } from './handles/types.js';
import { checkName, describe, resolveClientOptions, type ClientOptions, type ResolvedOptions } from './options.js';
import { fairLock } from './primitives/fair.js';
import { plainLock } from './primitives/plain.js';
import type { Primitive } from './primitives/primitive.js';
import { newScope, runInScope } from './scope.js';
import { MasterStore } from './store/master/master.js';
import { QuorumStore } from './store/quorum/quorum.js';
import type { Store } from './store/types.js';
import { Watchdog } from './watchdog/watchdog.js';

/**
 * Entry point and composition root: one per process (or per Redis topology). Wires a
 * store for the topology, the watchdog and the engine, and hands out cheap Lock handles
 * that reach them through a narrow port.
 */
export class LockClient extends EventEmitter<ClientEvents> {
  /** Random per client: part of every owner id it writes (`host:pid:clientId:scopeId`). */
  readonly id: string = randomUUID();
  private readonly options: ResolvedOptions;
  private readonly store: Store;
  private readonly engine: Engine;
  private readonly port: LockPort;
  private readonly fair: Primitive | undefined;
  private lastUnscoped = 0;
  private closing: Promise<void> | undefined;

  /**
   * @param connection an ioredis Redis or Cluster, or an array of independent Redis
   *   masters (quorum mode). holdfast never closes them.
   */
  constructor(connection: Connection | readonly Connection[], options?: ClientOptions) {
    super();
    const connections = checkConnections(connection);
    this.options = resolveClientOptions(options);
    const { watchdogTimeout, commandTimeout, driftFactor } = this.options;
    const levelsNow = (key: string, owner: string) => this.engine.levelsOf(key, owner);
    const masters = connections.map((c) => new MasterStore(c, levelsNow));
    this.store = Array.isArray(connection)
      ? new QuorumStore(
          masters,
          driftFactor,
          // Longer than the longest lease a holder could still believe in, with room for
          // its timers firing late on a busy machine (Redlock: restart delay > max TTL).
          watchdogTimeout + Math.max(100, watchdogTimeout / 4),
        )
      : masters[0];
    // A bound of one Redis call: a third of the lease, 100 ms to 1 s, so that one
    // attempt against an unreachable Redis settles within a second by default.
    const timeoutFor = (lease: number) => commandTimeout ?? Math.min(1_000, Math.max(100, Math.floor(lease / 3)));
    const events = new EventHub(this);
    const watchdog = new Watchdog(
      this.store,
      {
        renewed: (hold) => events.publish('renewed', hold.keys.name, () => ({ name: hold.keys.name, owner: hold.owner, kind: hold.primitive.kind, leaseTime: hold.lease })),
        renewalFailed: (hold, error, attempt) => events.publish('renewalFailed', hold.keys.name, () => ({ name: hold.keys.name, owner: hold.owner, kind: hold.primitive.kind, error, attempt })),
      },
      timeoutFor,
    );
    this.engine = new Engine(this.store, watchdog, events, { watchdogTimeout, timeoutFor });
    this.fair = this.store.fairQueue ? fairLock(this.store, watchdogTimeout) : undefined;
    this.port = this.makePort(events, timeoutFor(watchdogTimeout));
  }

  /** A handle on the lock called `name`; cheap, any number per name. */
  getLock(name: string): Lock {
    this.engine.assertOpen();
    return new LockHandle(this.port, checkName(name), plainLock);
  }

  /**
   * A handle on a fair lock: the same API as getLock, but granted strictly in request
   * order across processes (a queue in Redis). One master or a Cluster; not quorum mode.
   * Don't use one name both as a fair and a plain lock.
   */
  getFairLock(name: string): Lock {
    this.engine.assertOpen();
    checkName(name);
    // Throws the reason up front when the topology has no queue (quorum mode).
    return new LockHandle(this.port, name, this.fair ?? fairLock(this.store, this.options.watchdogTimeout));
  }

  /** Runs fn in a new owner scope: locks taken inside reenter, and are its own. */
  scope<T>(fn: () => T): T {
    if (typeof fn !== 'function') throw new TypeError(`scope(fn): fn must be a function, got ${describe(fn)}`);
    return runInScope(newScope(), fn);
  }

  /**
   * Stops the watchdog (held locks expire at the end of their lease), rejects pending
   * waits with a LockError, drops subscriptions. The user's connections stay open.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.engine.close();
      await this.store.close();
    })();
    return this.closing;
  }

  get isClosed(): boolean {
    return this.engine.closed;
  }

  private makePort(events: EventHub, queryTimeout: number): LockPort {
    const { engine, store } = this;
    const prefix = this.options.keyPrefix;
    const owner = ownerPrefix(this.id);
    return {
      assertOpen: () => engine.assertOpen(),
      keysOf: (name) => {
        const key = `${prefix}{${name}}`;
        return { name, key, fence: `${key}:fence`, channel: `${key}:ch`, queue: `${key}:queue`, deadlines: `${key}:deadlines`, fairChannel: `${key}:next` };
      },
      ownerOf: (scope) => owner + scope.id,
      unscopedOwner: () => `${owner}~${(++this.lastUnscoped).toString(36)}`,
      holdOf: (keys, owner) => engine.holds.get(keys.key, owner),
      acquire: (primitive, keys, owner, leaseTime, waitTime, signal) => engine.acquire(primitive, keys, owner, leaseTime, waitTime, signal),
      release: (hold) => engine.release(hold),
      forceUnlock: (keys) => engine.forceUnlock(keys),
      isLocked: (keys) => store.isLocked(keys, queryTimeout),
      holdCount: (keys, owner) => store.holdCount(keys, owner, queryTimeout),
      pttl: (keys) => store.pttl(keys, queryTimeout),
      inspect: (keys) => store.inspect(keys, queryTimeout),
      eventsOf: (name, create) => (create ? events.of(name, true) : events.of(name, false)),
      forgetEvents: (name) => events.forget(name),
    };
  }
}
