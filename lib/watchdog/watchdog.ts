import type { Hold } from '../engine/hold.js';
import type { RenewOutcome, Store } from '../store/types.js';

/** What the watchdog reports besides losses (which it applies to the hold: hold.lose). */
export interface WatchdogEvents {
  renewed(hold: Hold): void;
  renewalFailed(hold: Hold, error: Error, attempt: number): void;
}

/** The watchdog's bookkeeping of one tracked hold. */
interface Renewal {
  /** Monotonic time the next renewal is due (Infinity for a leased hold: never renewed). */
  renewAt: number;
  /** A renewal of this hold is on its way. */
  inFlight: boolean;
  /** Failed renewals in a row. */
  failures: number;
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
 * unreachable and its renewal is stuck in the client's queue.
 *
 * Invariant (renew and cancel are ordered): only a hold in state 'held' is put in a
 * batch, and a reply about a hold that is no longer 'held' (its last unlock began, or
 * it ended) is ignored; so after unlock() begins, no renewal of that hold is sent.
 */
export class Watchdog {
  private readonly tracked = new Map<Hold, Renewal>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly events: WatchdogEvents,
    /** Bound of one renewal call for a lease: a stalled call is retried (renewalFailed) before the deadline. */
    private readonly timeoutFor: (lease: number) => number,
  ) {}

  get size(): number {
    return this.tracked.size;
  }

  track(hold: Hold): void {
    if (this.stopped) return;
    const renewal = { renewAt: hold.renewed ? hold.validUntil - (hold.lease * 2) / 3 : Infinity, inFlight: false, failures: 0 };
    this.tracked.set(hold, renewal);
    this.arm(Math.min(renewal.renewAt, hold.validUntil));
  }

  untrack(hold: Hold): void {
    // The timer stays armed: a lock/unlock cycle then costs no timer churn, and a tick
    // that finds nothing due just goes back to sleep.
    this.tracked.delete(hold);
  }

  /** The hold's deadline moved (a reentry extended it). */
  touched(hold: Hold): void {
    const renewal = this.tracked.get(hold);
    if (renewal) this.arm(Math.min(renewal.renewAt, hold.validUntil));
  }

  /**
   * The hold's lease became fixed (Hold.fixLease): no renewal of it is sent from here
   * on, only its deadline is enforced. A renewal already out is ignored when it answers
   * ok: the re-lease went after it on the same connection, so Redis keeps the re-lease.
   */
  fixed(hold: Hold): void {
    const renewal = this.tracked.get(hold);
    if (!renewal) return;
    renewal.renewAt = Infinity;
    this.arm(hold.validUntil);
  }

  stop(): void {
    this.stopped = true;
    this.tracked.clear();
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
    for (const [hold, renewal] of [...this.tracked]) {
      if (!hold.joinable) {
        this.tracked.delete(hold);
        continue;
      }
      if (hold.validUntil <= t) {
        this.tracked.delete(hold);
        hold.lose('expired');
        continue;
      }
      next = Math.min(next, hold.validUntil);
      if (renewal.inFlight) continue;
      // Coalesce: anything due within a quarter of its period rides in this batch.
      if (renewal.renewAt - hold.lease / 12 <= t) due.push(hold);
      else next = Math.min(next, renewal.renewAt);
    }
    if (due.length > 0) this.renew(due);
    if (next < Infinity) this.arm(next);
  }

  private renew(due: Hold[]): void {
    let timeout = Infinity;
    for (const hold of due) {
      this.tracked.get(hold)!.inFlight = true;
      timeout = Math.min(timeout, hold.validUntil - now(), this.timeoutFor(hold.lease));
    }
    const items = due.map((h) => ({ keys: h.keys, owner: h.owner, lease: h.lease, levels: h.count, renewal: h.primitive.renewal }));
    // The batch may not outlive the earliest deadline in it (that deadline is a loss),
    // nor one command bound: a stalled call is reported and retried while time is left.
    this.store.renew(items, Math.max(1, timeout)).then(
      (outcomes) => this.settle(due, outcomes),
      (error: Error) => this.settle(due, due.map(() => ({ ok: false, error }))),
    );
  }

  private settle(due: Hold[], outcomes: RenewOutcome[]): void {
    const t = now();
    due.forEach((hold, i) => {
      const renewal = this.tracked.get(hold);
      if (!renewal) return; // untracked meanwhile: nothing more for it
      renewal.inFlight = false;
      if (!hold.joinable) {
        this.tracked.delete(hold);
        return;
      }
      const outcome = outcomes[i];
      if (outcome.ok) {
        // A hold re-leased meanwhile (fixed) keeps the re-lease's deadline: Redis applied
        // the re-lease after this renewal.
        if (hold.renewed) {
          renewal.failures = 0;
          hold.extend(outcome.validUntil);
          renewal.renewAt = outcome.validUntil - (hold.lease * 2) / 3;
          this.events.renewed(hold);
        }
      } else if ('reason' in outcome) {
        this.tracked.delete(hold);
        hold.lose(outcome.reason);
      } else if (hold.validUntil <= t) {
        this.tracked.delete(hold);
        hold.lose('expired', outcome.error);
      } else if (hold.renewed) {
        renewal.failures += 1;
        // Retry soon enough for a couple more tries before the deadline, not in a hot loop.
        renewal.renewAt = t + Math.min(hold.lease / 3, Math.max(25, (hold.validUntil - t) / 4));
        this.events.renewalFailed(hold, outcome.error, renewal.failures);
      }
      if (this.tracked.has(hold)) this.arm(Math.min(renewal.renewAt, hold.validUntil));
    });
  }
}
