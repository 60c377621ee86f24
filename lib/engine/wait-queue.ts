import type { LockKeys } from '../store/types.js';
import type { Hold } from './hold.js';
import type { AcquireRequest } from './request.js';

/** One pending wait of this client in a local queue. */
export interface Waiter {
  readonly request: AcquireRequest;
  /** An acquisition or a hand-off for this waiter is under way: don't start another. */
  claimed: boolean;
  /** Resolved, rejected, timed out or aborted: a grant arriving now must be given back. */
  settled: boolean;
  /** Failed attempts in a row (Redis unreachable, timeouts); 0 after any answer. */
  failures: number;
  /** The last attempt's error while it is the latest outcome: the wait ends with it. */
  lastError: unknown;
  /**
   * Monotonic time of the pump's next attempt for this waiter, when the list told it
   * when to ask: the call's own attempt was refused and listed the client while the
   * pump was subscribed (LocalWaits.wait), or a 'head:<ms>' notice came (pump.ts
   * named). Until then only a wake-up calls for one.
   */
  retryAt: number | undefined;
  resolve(hold: Hold | null): void;
  reject(error: unknown): void;
}

/** Sleep until a timeout or a wake(); a wake that comes while awake is kept for the next sleep. */
export class Bell {
  private wakeup: (() => void) | undefined;
  private woken = false;
  /** Wakes so far: a caller can tell whether one came between two points. */
  wakes = 0;

  wake(): void {
    this.wakes += 1;
    this.woken = true;
    this.wakeup?.();
  }

  sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = ms < Infinity ? setTimeout(() => done(), Math.max(0, ms)) : undefined;
      const done = () => {
        if (timer) clearTimeout(timer);
        this.wakeup = undefined;
        this.woken = false;
        resolve();
      };
      this.wakeup = done;
    });
  }
}

/**
 * The waiters of one lock in this client, first come first served: a release by a
 * local owner hands the lock to the head in the same script call, and a new caller
 * queues behind waiters instead of barging in. One pump per queue does the waiting
 * (see LocalWaits).
 */
export class WaitQueue extends Bell {
  readonly waiters: Waiter[] = [];
  pumping = false;
  /** This client is on the lock's waiting list in Redis (see LocalWaits). */
  listed = false;
  /** The pump's subscriptions are confirmed: a release message from now on reaches wake(). */
  subscribed = false;

  constructor(readonly keys: LockKeys) {
    super();
  }

  /** No waiter left that still wants the lock. */
  get idle(): boolean {
    return this.waiters.length === 0;
  }

  /** The first waiter to try for, skipping those with a grant under way. */
  next(): Waiter | undefined {
    return this.waiters.find((w) => !w.claimed && !w.settled);
  }

  add(waiter: Waiter): void {
    this.waiters.push(waiter);
  }

  remove(waiter: Waiter): void {
    const i = this.waiters.indexOf(waiter);
    if (i !== -1) this.waiters.splice(i, 1);
  }
}
