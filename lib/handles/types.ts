import type { LockEvents } from '../events.js';
import type { LockOptions, ScopedOptions, TryLockOptions } from '../options.js';

/** What run(fn) passes to fn. */
export interface HeldContext {
  /** Aborts with a LockLostError when the lock is lost while fn runs. */
  readonly signal: AbortSignal;
  /** Fencing token of this hold: strictly increasing per name; pass it to the store you guard. */
  readonly token: number;
  readonly name: string;
}

/** What acquire() resolves to: release it, or let `await using` do it. */
export interface Held extends HeldContext, AsyncDisposable {
  /** Drops this acquisition (one level when it was a reentry). */
  release(): Promise<void>;
  /** Runs fn in the owner scope of this hold, so that lock()/run() inside reenter. */
  run<T>(fn: () => T | Promise<T>): Promise<T>;
}

/** One owner holding a lock, as `inspect()` shows it. */
export interface LockHolder {
  /** The owner id written in Redis: `host:pid:clientId:scope`. */
  readonly owner: string;
  /** Host and process of the owner, read from its id; null for an id of another form. */
  readonly host: string | null;
  readonly pid: number | null;
  /** Reentry levels. */
  readonly count: number;
}

/** Who holds a lock and for how long: `lock.inspect()`, `holdfast status NAME --json`. */
export interface LockInfo {
  readonly name: string;
  readonly locked: boolean;
  /** As remainTimeToLive(): ms left on the lease; -2 when absent, -1 with no expiry. */
  readonly ttl: number;
  /** The last fencing token minted for the name, or null when none is known. */
  readonly token: number | null;
  readonly holders: readonly LockHolder[];
  /** How many owners are known to wait (the fair lock's queue), or null where that is not known. */
  readonly waiters: number | null;
}

/**
 * A handle on one named lock (getLock, getFairLock). Cheap: any number per name, all
 * sharing the client's state. Inside a scope (locks.scope, run) the scope is the owner
 * and calls reenter; outside every scope each acquisition is its own owner and
 * unlock() releases the one this handle took.
 */
export interface Lock {
  readonly name: string;
  /** Granted in request order across processes (getFairLock). */
  readonly fair: boolean;
  /** Waits until held. lock(lease) or lock({ leaseTime, signal }); without a lease the watchdog renews it. */
  lock(leaseOrOptions?: number | LockOptions): Promise<void>;
  /** One attempt, or waits up to waitTime: tryLock(), tryLock(wait), tryLock(wait, lease), tryLock({ ... }). */
  tryLock(waitTimeOrOptions?: number | TryLockOptions, leaseTime?: number): Promise<boolean>;
  /** One level down; at zero the key is deleted (or handed to the next local waiter). */
  unlock(): Promise<void>;
  /** Deletes the lock whoever holds it (their holds are lost); true when there was one. */
  forceUnlock(): Promise<boolean>;
  isLocked(): Promise<boolean>;
  isHeldByCurrentScope(): Promise<boolean>;
  /** Reentry count of the current scope (or of this handle's unscoped hold), 0 if none. */
  getHoldCount(): Promise<number>;
  /** Milliseconds left on the lock's lease; -2 when it is absent, -1 when it has no expiry. */
  remainTimeToLive(): Promise<number>;
  /** Who holds the lock (owners with host and pid), its TTL, the last token and the known waiters. */
  inspect(): Promise<LockInfo>;
  /**
   * Runs fn holding the lock and releases it after. Reenters when the current scope
   * holds the lock, else runs fn in a new child scope (so sibling run() calls exclude
   * each other). Rejects with LockLostError when the lock was lost while fn ran, and
   * with LockTimeoutError when waitTime ran out.
   */
  run<T>(fn: (context: HeldContext) => T | Promise<T>, options?: ScopedOptions): Promise<T>;
  /**
   * Takes the lock and returns a Held to release, e.g. `await using held = await lock.acquire()`.
   * Inside a scope the scope owns it (nested acquisitions reenter); outside every scope
   * it is its own owner, and `held.run(fn)` runs fn as that owner.
   */
  acquire(options?: ScopedOptions): Promise<Held>;
  on<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this;
  once<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this;
  off<E extends keyof LockEvents>(event: E, listener?: LockEvents[E]): this;
}
