import type { AcquireResult, LockKeys, ReleaseResult, Store } from '../store/types.js';

/** How waiters of a primitive wait: in this client's FIFO with hand-off, or in a queue in Redis. */
export type WaitStyle = 'local' | 'fairQueue';

/**
 * A kind of lock as a strategy over the engine: which scripts take and give back a
 * level, and how its waiters wait. The engine (acquire, release, waits, give-backs,
 * watchdog) is the same for every primitive; a new one (read, write, semaphore, multi)
 * is a new implementation of this, not a flag threaded through the engine.
 */
export interface Primitive {
  /** Name in events and metrics. */
  readonly kind: 'lock' | 'fair' | 'multi';
  readonly waits: WaitStyle;
  /** One attempt. `queued`: the caller is waiting (a fair waiter joins or heartbeats the queue). */
  attempt(store: Store, keys: LockKeys, owner: string, lease: number, held: number, timeout: number, queued: boolean): Promise<AcquireResult>;
  /** Drops one level of owner's, `held` being the levels the client holds before the call. */
  release(store: Store, keys: LockKeys, owner: string, held: number, timeout: number): Promise<ReleaseResult>;
}
