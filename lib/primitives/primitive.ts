import type { AcquireResult, LockKeys, ReleaseResult, RenewScript, Store } from '../store/types.js';

/**
 * How waiters of a primitive wait: in this client's FIFO with hand-off ('local'), or
 * in a queue in Redis ('fairQueue'): attempt(queued = true) joins or heartbeats it,
 * leave() leaves it, and a release publishes on keys.fairChannel the owner it wakes
 * (or '*' to wake every waiter of the key, who then retry in queue order).
 */
export type WaitStyle = 'local' | 'fairQueue';

/** Name of a primitive in events and metrics (the `holdfast.lock.kind` attribute). */
export type PrimitiveKind = 'lock' | 'fair' | 'multi' | 'read' | 'write' | 'semaphore';

/**
 * A kind of lock as a strategy over the engine: which scripts take and give back a
 * level, and how its waiters wait. The engine (acquire, release, waits, give-backs,
 * watchdog) is the same for every primitive; a new one (read, write, semaphore, multi)
 * is a new implementation of this, not a flag threaded through the engine.
 */
export interface Primitive {
  /** Name in events and metrics. */
  readonly kind: PrimitiveKind;
  readonly waits: WaitStyle;
  /** The watchdog's renewal of its holds; absent: the lock hash's (renew.lua). */
  readonly renewal?: RenewScript;
  /**
   * One attempt. `queued`: the caller is waiting (a fair waiter joins or heartbeats the
   * queue); `wait`: that wait's id, to which a fair lock's release may grant the lock.
   */
  attempt(store: Store, keys: LockKeys, owner: string, lease: number, held: number, timeout: number, queued: boolean, wait?: string): Promise<AcquireResult>;
  /**
   * Drops one level of owner's, `held` being the levels the client holds before the
   * call; `wakeHead`: a last release wakes the waiting list's head though its turn has
   * not come (engine/deferred-wake.ts; primitives without a waiting list ignore it).
   */
  release(store: Store, keys: LockKeys, owner: string, held: number, timeout: number, wakeHead?: boolean): Promise<ReleaseResult>;
  /** Deletes its holds whoever holds them; absent: the lock hash (store.forceUnlock). */
  forceUnlock?(store: Store, keys: LockKeys, timeout: number): Promise<boolean>;
  /** Waits 'fairQueue' only: a waiter that gives up leaves the queue (`wait`: its id, as its attempts passed it). */
  leave?(store: Store, keys: LockKeys, owner: string, timeout: number, wait: string): Promise<void>;
}
