import type { Backend, RenewOutcome } from './backend/types.js';
import type { Hold } from './hold.js';
import type { LossReason } from './errors/LockLostError.js';

export interface WatchdogEvents {
  renewed(hold: Hold): void;
  renewalFailed(hold: Hold, error: Error, attempt: number): void;
  lost(hold: Hold, reason: LossReason, cause?: unknown): void;
}

const now = () => performance.now();

/**
 * One renewal scheduler per client (Redisson's LockTask, without its timer per lock):
 * a single timer wakes at the earliest renewal or deadline among the tracked holds;
 * every hold due within the next quarter period is renewed in the same batch, so
 * holds taken close together share round trips.
 *
 * It also enforces each hold's client-side deadline (validUntil): a hold whose last
 * successful renewal (or acquisition) is a full lease old is lost, even while Redis is
 * unreachable and its renewal is stuck in ioredis's queue.
 *
 * Renew and cancel are ordered: untrack() removes the hold before its release is sent,
 * no batch includes an untracked hold, and a reply about an untracked hold is ignored.
 */
export class Watchdog {
  private readonly holds = new Set<Hold>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;

  constructor(
    private readonly backend: Backend,
    private readonly events: WatchdogEvents,
    /** Bound of one renewal call for a lease: a stalled call is retried (renewalFailed) before the deadline. */
    private readonly timeoutFor: (lease: number) => number,
  ) {}

  get size(): number {
    return this.holds.size;
  }

  track(hold: Hold): void {
    if (this.stopped) return;
    this.holds.add(hold);
    this.arm(Math.min(hold.renewAt, hold.validUntil));
  }

  untrack(hold: Hold): void {
    // The timer stays armed: a lock/unlock cycle then costs no timer churn, and a tick
    // that finds nothing due just goes back to sleep.
    this.holds.delete(hold);
  }

  /** Called when a hold's deadline moved (a reentry extended it). */
  touched(hold: Hold): void {
    if (this.holds.has(hold)) this.arm(Math.min(hold.renewAt, hold.validUntil));
  }

  stop(): void {
    this.stopped = true;
    this.holds.clear();
    this.disarm();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private arm(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    // unref: a held lock alone does not keep the process alive (its connection does).
    this.timer = setTimeout(() => this.tick(), Math.max(0, Math.ceil(at - now()))).unref();
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const t = now();
    const due: Hold[] = [];
    let next = Infinity;
    for (const hold of [...this.holds]) {
      if (hold.validUntil <= t) {
        this.holds.delete(hold);
        this.events.lost(hold, 'expired');
        continue;
      }
      next = Math.min(next, hold.validUntil);
      if (hold.renewing) continue;
      // Coalesce: anything due within a quarter of its period rides in this batch.
      if (hold.watchdog && hold.renewAt - hold.lease / 12 <= t) due.push(hold);
      else next = Math.min(next, hold.renewAt);
    }
    if (due.length > 0) this.renew(due);
    if (next < Infinity) this.arm(next);
  }

  private renew(due: Hold[]): void {
    let timeout = Infinity;
    for (const hold of due) {
      hold.renewing = true;
      timeout = Math.min(timeout, hold.validUntil - now(), this.timeoutFor(hold.lease));
    }
    const items = due.map((h) => ({ keys: h.keys, owner: h.owner, lease: h.lease }));
    // The batch may not outlive the earliest deadline in it (that deadline is a loss),
    // nor one command bound: a stalled call is reported and retried while time is left.
    this.backend.renew(items, Math.max(1, timeout)).then(
      (outcomes) => this.settle(due, outcomes),
      (error: Error) => this.settle(due, due.map(() => ({ ok: false, error }))),
    );
  }

  private settle(due: Hold[], outcomes: RenewOutcome[]): void {
    const t = now();
    due.forEach((hold, i) => {
      hold.renewing = false;
      if (!this.holds.has(hold)) return; // released or lost meanwhile: nothing more for it
      const outcome = outcomes[i];
      if (outcome.ok) {
        hold.attempts = 0;
        hold.validUntil = Math.max(hold.validUntil, outcome.validUntil);
        hold.renewAt = outcome.validUntil - (hold.lease * 2) / 3;
        this.events.renewed(hold);
      } else if ('reason' in outcome) {
        this.holds.delete(hold);
        this.events.lost(hold, outcome.reason);
      } else if (hold.validUntil <= t) {
        this.holds.delete(hold);
        this.events.lost(hold, 'expired', outcome.error);
      } else {
        hold.attempts += 1;
        // Retry soon enough for a couple more tries before the deadline, not in a hot loop.
        hold.renewAt = t + Math.min(hold.lease / 3, Math.max(25, (hold.validUntil - t) / 4));
        this.events.renewalFailed(hold, outcome.error, hold.attempts);
      }
      if (this.holds.has(hold)) this.arm(Math.min(hold.renewAt, hold.validUntil));
    });
  }
}
