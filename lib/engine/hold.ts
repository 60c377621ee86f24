import { LockLostError, type LossReason } from '../errors/LockLostError.js';
import { LockRevokedError } from '../errors/LockRevokedError.js';
import type { Primitive } from '../primitives/primitive.js';
import type { LockKeys } from '../store/types.js';

/**
 * Where a hold is in its life. Every transition is a method below, and each fires its
 * event (through HoldListener) exactly once:
 *
 *   held(n) --reenter--> held(n+1) --drop--> held(n)
 *   held(1) --beginRelease--> releasing --finishRelease--> released   ('released')
 *                                       --abandon-->       abandoned  (no event: the unlock rejects)
 *   held | releasing --lose--> lost                                  ('lost')
 *
 * released, abandoned and lost are final. A lost hold keeps its level count so that
 * each outstanding unlock() rejects with the loss (unwind) instead of "not held".
 */
export type HoldState = 'held' | 'releasing' | 'released' | 'abandoned' | 'lost';

/** What the engine does when a hold ends; the hold calls each at most once. */
export interface HoldListener {
  lost(hold: Hold, error: LockLostError): void;
  released(hold: Hold): void;
  /** Any final state: stop renewing it, forget it, wake local waiters. */
  ended(hold: Hold): void;
}

/**
 * One owner's hold on one lock, as this client knows it. Reentries share it (count).
 * Times are monotonic (performance.now()), never wall-clock. Renewal bookkeeping
 * belongs to the watchdog, not here.
 */
export class Hold {
  private stateNow: HoldState = 'held';
  private levels = 1;
  private lossError: LockLostError | undefined;
  /** Asked to let go while held (requestRelease): the signal's reason, the hold stays held. */
  private revokeError: LockRevokedError | undefined;
  private controller: AbortController | undefined;
  /** No renewal succeeded by then: the lease may have ended, so the hold counts as lost. */
  private deadline: number;
  private leaseNow: number;
  private renewedNow: boolean;

  constructor(
    readonly keys: LockKeys,
    readonly owner: string,
    readonly token: number,
    lease: number,
    renewed: boolean,
    validUntil: number,
    /** How this hold was taken and is given back (plain lock, fair lock, ...). */
    readonly primitive: Primitive,
    private readonly listener: HoldListener,
  ) {
    this.deadline = validUntil;
    this.leaseNow = lease;
    this.renewedNow = renewed;
  }

  /** The lease in ms; for a watchdog hold, the client's watchdogTimeout. */
  get lease(): number {
    return this.leaseNow;
  }

  /** Taken without a lease (and not re-leased since): the watchdog renews it until it ends. */
  get renewed(): boolean {
    return this.renewedNow;
  }

  get state(): HoldState {
    return this.stateNow;
  }

  /** Levels held (reentry depth); for a lost hold, the unlocks still to come. */
  get count(): number {
    return this.levels;
  }

  get validUntil(): number {
    return this.deadline;
  }

  get lost(): LockLostError | undefined {
    return this.lossError;
  }

  /** Held or being released: not yet final. */
  get live(): boolean {
    return this.stateNow === 'held' || this.stateNow === 'releasing';
  }

  /** Held and not being released: a reentry may join it. */
  get joinable(): boolean {
    return this.stateNow === 'held';
  }

  /** Levels Redis counts for this owner as far as the client knows (0 once lost or ended). */
  get levelsHeld(): number {
    return this.live ? this.levels : 0;
  }

  /**
   * Aborted with a LockRevokedError when the hold is asked to let go, or a LockLostError
   * when it is lost, whichever comes first; created on first use.
   */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    // A revoke is only ever recorded while held, so before any loss: it came first.
    const reason = this.revokeError ?? this.lossError;
    if (reason && !this.controller.signal.aborted) this.controller.abort(reason);
    return this.controller.signal;
  }

  /**
   * Asked to let go (requestRelease): the signal aborts, the hold stays held until the
   * holder unlocks. Returns the error the first time, undefined if not held or asked before.
   */
  revoke(): LockRevokedError | undefined {
    if (this.stateNow !== 'held' || this.revokeError) return undefined;
    this.revokeError = new LockRevokedError(this.keys.name, this.owner);
    this.controller?.abort(this.revokeError);
    return this.revokeError;
  }

  /**
   * Redis may not have confirmed this hold (granted or renewed it) since `t` (monotonic):
   * its last confirmation went out no earlier than its deadline less the lease, so one
   * sent before `t` cannot be ruled out.
   */
  unconfirmedSince(t: number): boolean {
    return this.deadline - this.leaseNow <= t;
  }

  /** A renewal (or a reentry) moved the deadline; never moves it back. */
  extend(validUntil: number): boolean {
    if (validUntil <= this.deadline) return false;
    this.deadline = validUntil;
    return true;
  }

  /**
   * A re-lease to a fixed `lease` is being sent (multi-lock: every name's lease starts
   * when the last is held): from here on the watchdog no longer renews the hold. The
   * deadline drops to `bound` if that is earlier, `bound` being no later than the
   * re-lease's own deadline, so it never outlasts the key whether the re-lease lands or not.
   */
  fixLease(lease: number, bound: number): void {
    this.leaseNow = lease;
    this.renewedNow = false;
    this.deadline = Math.min(this.deadline, bound);
  }

  /** Redis confirmed the re-lease: the deadline is the re-lease's, earlier or later than before. */
  leasedUntil(validUntil: number): void {
    this.deadline = validUntil;
  }

  reenter(validUntil: number): void {
    this.expect('held', 'reenter');
    this.levels += 1;
    this.extend(validUntil);
  }

  /** One level down, not the last. */
  drop(): void {
    this.expect('held', 'drop a level of');
    if (this.levels <= 1) throw new Error('holdfast internal: drop() of the last level; use beginRelease()');
    this.levels -= 1;
  }

  /** The last level goes: from here on it is never renewed, but still counts as held locally. */
  beginRelease(): void {
    this.expect('held', 'release');
    this.stateNow = 'releasing';
  }

  finishRelease(): void {
    if (!this.live) return;
    this.levels = 0;
    this.stateNow = 'released';
    this.listener.ended(this);
    this.listener.released(this);
  }

  /** The last unlock failed: the key is left to expire within its lease. */
  abandon(): void {
    if (!this.live) return;
    this.levels = 0;
    this.stateNow = 'abandoned';
    this.listener.ended(this);
  }

  /** No longer ours. Returns the loss (the earlier one if it was lost already). */
  lose(reason: LossReason, cause?: unknown): LockLostError | undefined {
    if (!this.live) return this.lossError;
    this.lossError = new LockLostError(this.keys.name, this.owner, reason, cause);
    this.stateNow = 'lost';
    this.controller?.abort(this.lossError);
    this.listener.ended(this);
    this.listener.lost(this, this.lossError);
    return this.lossError;
  }

  /** An unlock() of a lost hold: one outstanding level fewer. True when none is left. */
  unwind(): boolean {
    this.levels = Math.max(0, this.levels - 1);
    return this.levels === 0;
  }

  private expect(state: HoldState, action: string): void {
    if (this.stateNow !== state) throw new Error(`holdfast internal: cannot ${action} a hold that is ${this.stateNow}`);
  }
}
