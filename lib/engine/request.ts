import type { Primitive } from '../primitives/primitive.js';
import type { Granted, LockKeys, Store } from '../store/types.js';
import type { Hold } from './hold.js';
import type { HoldRegistry } from './registry.js';

/** One acquisition asked of the engine, from the call to its end. */
export interface AcquireRequest {
  readonly keys: LockKeys;
  readonly owner: string;
  readonly primitive: Primitive;
  /** The lease in ms; for a watchdog hold, the client's watchdogTimeout. */
  readonly lease: number;
  /** Taken without a lease: the watchdog renews it. */
  readonly renewed: boolean;
  /** Monotonic time of the call, for the `acquired` event's waitedMs. */
  readonly start: number;
  /** Monotonic time the wait gives up (Infinity: until held, aborted or closed). */
  readonly deadline: number;
  /**
   * Monotonic time by which every attempt of the request has settled (Infinity: each
   * has one command bound of its own). A multi-lock's take asks its names one after
   * another under one budget: its attempts share the one bound past that budget that
   * DESIGN allows a wait ("Waiting"), instead of one bound each.
   */
  readonly settleBy: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * The bound of one attempt of `request`: one command bound, cut to what is left before
 * its settleBy (at least 1 ms: an attempt past it fails at once, as a timed-out one does,
 * and a grant it brought late is given back).
 */
export function attemptTimeout(host: { timeoutFor(lease: number): number }, request: AcquireRequest): number {
  const bound = host.timeoutFor(request.lease);
  return request.settleBy === Infinity ? bound : Math.max(1, Math.min(bound, request.settleBy - performance.now()));
}

/** What the waits (local queue, fair queue) need from the engine. */
export interface WaitHost {
  readonly store: Store;
  readonly closed: boolean;
  /**
   * Resolves once a closing client has left the queues and dropped its
   * subscriptions: only then are pending waits rejected, so that a caller who awaits
   * close() before handling them is in time.
   */
  readonly rejectingWaits: Promise<void>;
  /** Bound of one Redis call about a lock with this lease. */
  timeoutFor(lease: number): number;
  /**
   * This client's holds: whether another owner of it holds the key (self-deadlock.ts),
   * and whether its last unlock of a hold on the key is on its way (the hold's end calls
   * Waits.freed(key)).
   */
  readonly holds: Pick<HoldRegistry, 'heldByOther' | 'releasing'>;
  /**
   * Makes a grant a hold: a new one, or a reentry of the owner's. Throws (having given
   * the grant back) when the grant's lease ran out before it was read (late-grant.ts).
   */
  grant(request: AcquireRequest, granted: Granted): Hold;
  /** Gives back a grant nobody will use (its waiter left while it was on its way); resolves once settled, never rejects. */
  giveBack(request: AcquireRequest): Promise<void>;
  /** A fair wait's attempt was refused or failed: it blocks (told to the event hub's probes; idempotent). */
  blocked(request: AcquireRequest): void;
  /** An attempt of a wait failed; reported as acquireFailed and retried. */
  failed(request: AcquireRequest, error: unknown, attempt: number): void;
  /** Background trouble with no caller to reject. */
  error(error: unknown): void;
}
