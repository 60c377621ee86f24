import type { LockKeys } from './backend/types.js';
import type { LockLostError } from './errors/LockLostError.js';

/**
 * One owner's hold on one lock, as this client knows it. Reentries share it (count).
 * Times are monotonic (performance.now()), never wall-clock.
 */
export class Hold {
  /** Reentry depth: unlock() at 1 releases the key. */
  count = 1;
  /** Set once the hold is lost; unlock() then rejects with it and touches nothing in Redis. */
  lost: LockLostError | undefined;
  /** Set once released: the watchdog never renews it again. */
  released = false;
  /**
   * The last unlock is on its way: no longer renewed, but the key still counts as held
   * here, so no local waiter tries for it while it is being handed over.
   */
  releasing = false;
  /** No renewal succeeded by then: the lease may have ended, so the hold counts as lost. */
  validUntil: number;
  /** Watchdog bookkeeping: next renewal due, renewal under way, failed attempts in a row. */
  renewAt: number;
  renewing = false;
  attempts = 0;
  private controller: AbortController | undefined;

  constructor(
    readonly keys: LockKeys,
    readonly owner: string,
    readonly token: number,
    /** The lease in ms; for a watchdog hold, the client's watchdogTimeout. */
    readonly lease: number,
    /** Taken without a lease: the watchdog renews it until released or lost. */
    readonly watchdog: boolean,
    validUntil: number,
    /** A fair lock's hold: released through the fair script, which wakes the queue's head. */
    readonly fair = false,
  ) {
    this.validUntil = validUntil;
    this.renewAt = watchdog ? validUntil - (lease * 2) / 3 : Infinity;
  }

  get live(): boolean {
    return !this.lost && !this.released;
  }

  /** Live and not being released: a reentry may join it. */
  get joinable(): boolean {
    return this.live && !this.releasing;
  }

  /** Aborted with a LockLostError when the hold is lost; created on first use. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.lost && !this.controller.signal.aborted) this.controller.abort(this.lost);
    return this.controller.signal;
  }

  markLost(error: LockLostError): void {
    this.lost = error;
    this.controller?.abort(error);
  }
}
