import type { Hold } from '../engine/hold.js';
import type { ReLeased } from '../engine/re-lease.js';
import type { Primitive } from '../primitives/primitive.js';
import type { Scope } from '../scope.js';
import type { LockKeys, LockState } from '../store/types.js';
import type { EventEmitter } from 'eventemitter3';
import type { LockEvents } from '../events.js';

/**
 * What a handle sees of its client: owners, holds, and the engine's calls. Handles
 * never reach the store, the watchdog or the waits.
 */
export interface LockPort {
  assertOpen(): void;
  keysOf(name: string): LockKeys;
  /** The owner id of a scope of this client. */
  ownerOf(scope: Scope): string;
  /** A fresh owner for one acquisition made outside every scope. */
  unscopedOwner(): string;
  holdOf(keys: LockKeys, owner: string): Hold | undefined;
  /** `settleBy`: when every attempt of the call has settled (a multi-lock's take: engine/request.ts AcquireRequest). */
  acquire(primitive: Primitive, keys: LockKeys, owner: string, leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined, settleBy?: number): Promise<Hold | null>;
  /** The bound of one Redis call about a hold of this lease (absent: the watchdog's). */
  commandBound(leaseTime: number | undefined): number;
  release(hold: Hold): Promise<void>;
  /**
   * Several names for owner in one call, all or none (engine/take-at-once.ts): a hold per
   * name, or undefined when they are to be taken one at a time.
   */
  acquireAll(primitive: Primitive, keys: readonly LockKeys[], owner: string, leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined): Promise<Hold[] | undefined>;
  /** The last unlock of each hold in one call, a promise per hold as release() settles; undefined when they go one at a time. */
  releaseAll(holds: readonly Hold[]): Promise<void>[] | undefined;
  /**
   * Gives the holds a fixed lease of `lease` ms from now, in one renewal per master or
   * slot (engine/re-lease.ts says what each answer means), settled by `settleBy` when given.
   */
  reLease(holds: readonly Hold[], lease: number, settleBy?: number): Promise<ReLeased[]>;
  /** `primitive`: whose forceUnlock deletes the holds (absent: the lock hash's). */
  forceUnlock(keys: LockKeys, primitive?: Primitive): Promise<boolean>;
  /** `primitive`: whose requestRelease asks the holders (absent: the lock hash's). How many holds were asked. */
  requestRelease(keys: LockKeys, primitive?: Primitive): Promise<number>;
  isLocked(keys: LockKeys): Promise<boolean>;
  holdCount(keys: LockKeys, owner: string): Promise<number>;
  pttl(keys: LockKeys): Promise<number>;
  /** `primitive`: whose inspect reads the holds and the waiters (absent: the lock hash's). */
  inspect(keys: LockKeys, primitive?: Primitive): Promise<LockState>;
  /**
   * A primitive's own query of its store (`call`, given the bound of one query): a
   * failure to reach Redis rejects with LockUnavailableError saying it could not
   * `doing(quoted name)`, as isLocked and inspect do; final errors pass as they are.
   */
  query<T>(keys: LockKeys, doing: (name: string) => string, call: (timeout: number) => Promise<T>): Promise<T>;
  /** The emitter of one name (created for on/once), and its release once unused. */
  eventsOf(name: string, create: boolean): EventEmitter<LockEvents> | undefined;
  forgetEvents(name: string): void;
}
