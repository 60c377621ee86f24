import type { LossReason } from './errors/LockLostError.js';

/**
 * Which primitive an event is about, so that metrics and logs can tell them apart
 * (`holdfast.lock.kind`): `lock` (getLock), `fair` (getFairLock), and the rest of the
 * lock family as it lands: `read`, `write`, `semaphore`, `multi`.
 */
export type LockKind = 'lock' | 'fair' | 'read' | 'write' | 'semaphore' | 'multi';

/** Payload of `acquired`: an owner's first hold of a lock (not a reentry). */
export interface AcquiredEvent {
  /** The lock's name. */
  name: string;
  /** The owner id written in Redis (`host:pid:clientId:scope`). */
  owner: string;
  /** Which primitive: lock, fair, ... (see LockKind). */
  kind: LockKind;
  /** The hold's fencing token. */
  token: number;
  /** Time from the call to the grant, in ms (0-ish when uncontended). */
  waitedMs: number;
}
/** Payload of `released`: the owner's hold count reached 0 and the lock was let go. */
export interface ReleasedEvent {
  /** The lock's name. */
  name: string;
  /** The owner that released it. */
  owner: string;
  /** Which primitive: lock, fair, ... (see LockKind). */
  kind: LockKind;
}
/** Payload of `renewed`: a watchdog renewal succeeded. */
export interface RenewedEvent {
  /** The lock's name. */
  name: string;
  /** The owner whose hold was renewed. */
  owner: string;
  /** Which primitive: lock, fair, ... (see LockKind). */
  kind: LockKind;
  /** The lease the renewal set, in ms (the client's `watchdogTimeout`). */
  leaseTime: number;
}
/** Payload of `renewalFailed`: a renewal attempt failed; the hold is not lost yet. */
export interface RenewalFailedEvent {
  /** The lock's name. */
  name: string;
  /** The owner whose hold could not be renewed. */
  owner: string;
  /** Which primitive: lock, fair, ... (see LockKind). */
  kind: LockKind;
  /** Why: a {@link CommandTimeoutError}, a connection error, a {@link QuorumError}. */
  error: Error;
  /** Failed attempts in a row; retried while the lease lasts. */
  attempt: number;
}
/** Payload of `acquireFailed`: an attempt of a wait could not reach Redis or a quorum. */
export interface AcquireFailedEvent {
  /** The lock's name. */
  name: string;
  /** The owner that is waiting. */
  owner: string;
  /** Which primitive: lock, fair, ... (see LockKind). */
  kind: LockKind;
  /** Why the attempt failed: a timeout, a connection error, no quorum. */
  error: Error;
  /** Failed attempts of this wait so far; retried with backoff until the wait ends. */
  attempt: number;
}
/** Payload of `lost`: the hold is no longer ours; scoped signals abort with `error`. */
export interface LostEvent {
  /** The lock's name. */
  name: string;
  /** The owner that lost it. */
  owner: string;
  /** Which primitive: lock, fair, ... (see LockKind). */
  kind: LockKind;
  /** `expired`, `taken`, `deleted` or `quorum` (see {@link LossReason}). */
  reason: LossReason;
  /** The {@link LockLostError} that the owner's unlock() rejects with. */
  error: Error;
}

/**
 * Payload of `revokeRequested`: someone asked this hold to let go (requestRelease). The
 * hold is still held; its signal aborted with `error` and the holder unlocks when ready.
 */
export interface RevokeRequestedEvent {
  /** The lock's name. */
  name: string;
  /** The owner that was asked. */
  owner: string;
  /** Which primitive: lock, fair, ... (see LockKind). */
  kind: LockKind;
  /** The {@link LockRevokedError} the hold's signal aborted with. */
  error: Error;
}

/**
 * Events of a {@link LockClient} (every lock) and of a {@link Lock} handle (its name
 * only; no `error`). Payloads are built only when someone listens. A listener that
 * throws breaks nothing: its error goes to the client's `error` event.
 *
 * @example
 * ```ts
 * locks.on('renewalFailed', ({ name, attempt, error }) => log.warn(`${name}: renewal ${attempt} failed: ${error.message}`));
 * locks.getLock('report').on('lost', ({ reason }) => log.error(`report lock lost: ${reason}`));
 * ```
 */
export interface LockEvents {
  /** An owner's first hold of a lock (reentries are not reported). */
  acquired: (event: AcquiredEvent) => void;
  /** An owner's hold count reached 0 and the lock was released or handed on. */
  released: (event: ReleasedEvent) => void;
  /** A watchdog renewal succeeded. */
  renewed: (event: RenewedEvent) => void;
  /** A renewal attempt failed; it is retried while the lease lasts, then the hold is `lost`. */
  renewalFailed: (event: RenewalFailedEvent) => void;
  /** An attempt of a wait failed (Redis or a quorum unreachable); retried while the wait lasts. */
  acquireFailed: (event: AcquireFailedEvent) => void;
  /** A hold is no longer ours: expired, taken, deleted, or no longer granted by a majority. */
  lost: (event: LostEvent) => void;
  /** Someone asked a hold to let go (requestRelease); it is still held until unlocked. */
  revokeRequested: (event: RevokeRequestedEvent) => void;
}

/** Events of a {@link LockClient}: every lock's {@link LockEvents}, and `error`. */
export interface ClientEvents extends LockEvents {
  /**
   * Anything else that went wrong in the background (a give-back or a queue leave
   * that failed, a throwing listener); never an unhandled rejection. With no `error`
   * listener it becomes a process warning (`HoldfastWarning`).
   */
  error: (error: Error) => void;
}
