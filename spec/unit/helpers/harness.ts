/**
 * Clients of the engine without LockClient and without Redis: each a real Engine, with
 * its Watchdog and EventHub wired as lib/client.ts wires them, over its own MemoryStore;
 * the clients of one spec share one MemoryRedis. Run under jest's fake timers, which
 * drive performance.now() (the engine's clock and the server's) and every timer.
 */
import { EventEmitter } from 'eventemitter3';
import { Engine } from '../../../lib/engine/engine';
import { EventHub } from '../../../lib/engine/event-hub';
import type { Hold } from '../../../lib/engine/hold';
import type { ClientEvents } from '../../../lib/events';
import { HoldRegistry } from '../../../lib/engine/registry';
import { fairLock } from '../../../lib/primitives/lock/fair';
import { reentrantLock } from '../../../lib/primitives/lock/plain';
import type { Primitive } from '../../../lib/primitives/primitive';
import { NameKeys } from '../../../lib/store/name-keys';
import { Watchdog } from '../../../lib/watchdog/watchdog';
import { MemoryStore, type MemoryRedis } from './memory-store';

/** The clients' watchdogTimeout, so the heartbeat lease of a queued waiter: it asks at least every third of it. */
export const HEARTBEAT = 3_000;
/** The lease the specs' holds are taken with (fixed: the watchdog only enforces its deadline). */
export const LEASE = 10_000;

/** Runs the timers due within `ms` of fake time, and every promise they settle. */
export const tick = (ms = 0): Promise<void> => jest.advanceTimersByTimeAsync(ms);

/** A promise whose outcome can be read without awaiting it (and which never goes unhandled). */
export interface Tracked<T> {
  readonly promise: Promise<T>;
  readonly state: 'pending' | 'resolved' | 'rejected';
  readonly value: T | undefined;
  readonly error: unknown;
  /** Fake time at which it settled. */
  readonly settledAt: number | undefined;
}

export function track<T>(promise: Promise<T>): Tracked<T> {
  const t = { promise, state: 'pending', value: undefined, error: undefined, settledAt: undefined } as { -readonly [K in keyof Tracked<T>]: Tracked<T>[K] };
  promise.then(
    (value) => Object.assign(t, { state: 'resolved', value, settledAt: performance.now() }),
    (error: unknown) => Object.assign(t, { state: 'rejected', error, settledAt: performance.now() }),
  );
  return t;
}

export interface AcquireOptions {
  /** The lease; LEASE if absent (null: a watchdog hold, renewed). */
  lease?: number | null;
  /** undefined: waits until held. */
  waitTime?: number;
  signal?: AbortSignal;
}

/** The pid of the last TestClient (each stands for a process of its own). */
let lastPid = 1000;

export class TestClient {
  readonly pid: number;
  readonly store: MemoryStore;
  readonly engine: Engine;
  readonly emitter = new EventEmitter<ClientEvents>();
  /** The lock: waits 'queue' with a queue, 'client' without. */
  readonly lock: Primitive;
  readonly fair: Primitive | undefined;
  readonly failures: Parameters<ClientEvents['acquireFailed']>[0][] = [];
  readonly errors: unknown[] = [];

  constructor(
    redis: MemoryRedis,
    /** Its part of owner ids: owners `host:<pid>:<id>:<n>`, so its channel `<key>:next:host:<pid>:<id>:`. */
    readonly id: string,
    options: { queue?: boolean } = {},
  ) {
    this.pid = ++lastPid;
    this.store = new MemoryStore(redis, options);
    const timeoutFor = (lease: number) => Math.min(1_000, Math.max(100, Math.floor(lease / 3)));
    const events = new EventHub(this.emitter);
    const watchdog = new Watchdog(this.store, { renewed: () => undefined, renewalFailed: () => undefined }, timeoutFor);
    this.engine = new Engine(this.store, watchdog, events, { watchdogTimeout: HEARTBEAT, timeoutFor }, new HoldRegistry());
    this.lock = reentrantLock(this.store, this.store.queue, HEARTBEAT, 'lock');
    this.fair = this.store.queue ? fairLock(this.store.queue, HEARTBEAT) : undefined;
    this.emitter.on('acquireFailed', (e) => this.failures.push(e));
    this.emitter.on('error', (e) => this.errors.push(e));
  }

  owner(n: number | string): string {
    return `host:${this.pid}:${this.id}:${n}`;
  }

  /** Engine.acquire of `owner` (a number: this client's owner n) on `name`, tracked. */
  acquire(primitive: Primitive, name: string, owner: number | string, options: AcquireOptions = {}): Tracked<Hold | null> {
    const lease = options.lease === null ? undefined : (options.lease ?? LEASE);
    return track(this.engine.acquire(primitive, keys(name), typeof owner === 'number' ? this.owner(owner) : owner, lease, options.waitTime, options.signal));
  }

  release(hold: Hold): Tracked<void> {
    return track(this.engine.release(hold));
  }
}

/** The keys of lock `name`, as a handle names them. */
export function keys(name: string): NameKeys {
  return new NameKeys(name, `holdfast:{${name}}`);
}
