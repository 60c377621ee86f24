import type { LossReason } from './errors/LockLostError.js';

/**
 * Which primitive an event is about, so that metrics and logs can tell them apart
 * (`holdfast.lock.kind`): `lock` (getLock), `fair` (getFairLock), and the rest of the
 * lock family as it lands: `read`, `write`, `semaphore`, `multi`.
 */
export type LockKind = 'lock' | 'fair' | 'read' | 'write' | 'semaphore' | 'multi';

export interface AcquiredEvent {
  name: string;
  owner: string;
  kind: LockKind;
  token: number;
  /** Time from the call to the grant, in ms (0-ish when uncontended). */
  waitedMs: number;
}
export interface ReleasedEvent {
  name: string;
  owner: string;
  kind: LockKind;
}
export interface RenewedEvent {
  name: string;
  owner: string;
  kind: LockKind;
  leaseTime: number;
}
export interface RenewalFailedEvent {
  name: string;
  owner: string;
  kind: LockKind;
  error: Error;
  /** Failed attempts in a row; retried while the lease lasts. */
  attempt: number;
}
export interface AcquireFailedEvent {
  name: string;
  owner: string;
  kind: LockKind;
  /** Why the attempt failed: a timeout, a connection error, no quorum. */
  error: Error;
  /** Failed attempts of this wait so far; retried with backoff until the wait ends. */
  attempt: number;
}
export interface LostEvent {
  name: string;
  owner: string;
  kind: LockKind;
  reason: LossReason;
  error: Error;
}

/** Events of a LockClient (every lock) and of a Lock handle (its name only; no `error`). */
export interface LockEvents {
  acquired: (event: AcquiredEvent) => void;
  released: (event: ReleasedEvent) => void;
  renewed: (event: RenewedEvent) => void;
  renewalFailed: (event: RenewalFailedEvent) => void;
  acquireFailed: (event: AcquireFailedEvent) => void;
  lost: (event: LostEvent) => void;
}

export interface ClientEvents extends LockEvents {
  /** Anything else that went wrong in the background; never an unhandled rejection. */
  error: (error: Error) => void;
}
