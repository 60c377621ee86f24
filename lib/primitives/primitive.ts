import type { LockKind } from '../events.js';
import type { MasterPort } from '../store/master/port.js';
import type { AcquireResult, LockKeys, LockState, ReleaseResult, RenewScript, Store } from '../store/types.js';

/**
 * What a primitive's folder builds its primitives from, once per client (LockClient's
 * getters, through its `use`): the client's store, the master whose port it builds its
 * own store calls over (undefined in quorum mode: a primitive that needs one place in
 * Redis refuses then), and the heartbeat lease of a queued waiter (watchdogTimeout).
 */
export interface Topology {
  readonly store: Store;
  readonly master: MasterPort | undefined;
  readonly heartbeat: number;
}

/**
 * Where a primitive's waiters wait:
 * - 'queue': in a queue in Redis. An attempt made with a wait id joins it (or moves the
 *   waiter's heartbeat deadline), leave() leaves it. A release grants the head (message
 *   'owner wait token') or wakes it (its owner id) on the client's channel under
 *   keys.wakeChannel; '*' there wakes every waiter of the key, who ask again in queue order.
 * - 'client': in their own client (quorum mode: no queue spans independent masters). A
 *   release says 'released' on keys.channel; this client's waiters of the key then ask
 *   again one at a time, oldest first.
 */
export type WaitStyle = 'queue' | 'client';

/** Name of a primitive in events and metrics (the `holdfast.lock.kind` attribute): the public LockKind. */
export type PrimitiveKind = LockKind;

/**
 * A kind of lock as a strategy over the engine: which scripts take and give back a
 * level, and where its waiters wait. The engine (acquire, release, the one wait,
 * give-backs, watchdog) is the same for every primitive; a new one is a new
 * implementation of this, not a flag threaded through the engine. It carries its store
 * calls (its folder built it over them from the Topology): the engine passes it none.
 */
export interface Primitive {
  /** Name in events and metrics. */
  readonly kind: PrimitiveKind;
  readonly waits: WaitStyle;
  /**
   * Its holds carry no fencing token (the semaphore): their token is 0, and the number in
   * a grant's message only dates the grant (engine/waits.ts). Absent: it is the token.
   */
  readonly unfenced?: true;
  /** The watchdog's renewal of its holds; absent: the lock hash's (renew.lua). */
  readonly renewal?: RenewScript;
  /**
   * One attempt. `wait`: the id of the wait making it (waits 'queue'): refused, it joins
   * the queue or heartbeats its place there, and a release may grant the lock to it.
   * Absent: one attempt that never queues.
   */
  attempt(keys: LockKeys, owner: string, lease: number, held: number, timeout: number, wait?: string): Promise<AcquireResult>;
  /** Drops one level of owner's, `held` being the levels the client holds before the call. */
  release(keys: LockKeys, owner: string, held: number, timeout: number): Promise<ReleaseResult>;
  /** Deletes its holds whoever holds them, and wakes its waiters; absent: the lock hash (store.forceUnlock, whose waiters wait in their clients). */
  forceUnlock?(keys: LockKeys, timeout: number): Promise<boolean>;
  /** Asks its holders to let go, changing nothing; the owners asked. Absent: the lock hash's (store.requestRelease). */
  requestRelease?(keys: LockKeys, timeout: number): Promise<string[]>;
  /** What inspect() reads. Absent: the lock hash's (store.inspect: no queue, `queued` 0). */
  inspect?(keys: LockKeys, timeout: number): Promise<LockState>;
  /**
   * Several names at once, all or none, for the multi-lock (Queue.acquireAll): one result
   * per name, every one a grant or none. Absent, or undefined: one name at a time.
   */
  attemptAll?(keys: readonly LockKeys[], owner: string, lease: number, timeout: number): Promise<AcquireResult>[] | undefined;
  /** The last level of owner's hold of each name at once (Queue.releaseAll). Absent, or undefined: one at a time. */
  releaseAll?(keys: readonly LockKeys[], owner: string, timeout: number): Promise<ReleaseResult>[] | undefined;
  /** Waits 'queue' only: the wait `wait` gives up and leaves the queue (a grant made to it and not taken up goes back). */
  leave?(keys: LockKeys, owner: string, timeout: number, wait: string): Promise<void>;
}
