import { withTimeout } from '../../util/timeout.js';
import type { LockKeys } from '../types.js';

/**
 * An owner's calls on one lock whose effect on Redis is not known yet: a call whose
 * bound ran out before its reply (still queued in the client library, which may run
 * it after a reconnect: a Cluster retries it after a delay, overtaken by commands sent
 * meanwhile), with whatever was sent to undo it.
 *
 * Invariant: an owner never has a new acquisition of a lock on its way while an earlier
 * call of its on that lock is unsettled. The repairs of exactly-once.ts compute each
 * level they pass from the client's count at the moment they are sent; an earlier
 * attempt landing in between (a late grant given back after a later attempt's level was
 * set: one give-back too many, which frees the lock under its holder) would make that
 * count wrong. The wait takes from the caller only time in which its call would have
 * gone to the same server as the unanswered one, over the same connection. Calls that
 * settle within their bound (the hot path) are never recorded: an empty Map's size is
 * all an acquisition pays.
 */
export class UnsettledCalls {
  /** `${keys.id}\n${owner}` -> settles once every call recorded for it has settled. */
  private readonly byOwner = new Map<string, Promise<void>>();

  /** Nothing unsettled for owner on this lock: an acquisition may go out at once. */
  clear(k: LockKeys, owner: string): boolean {
    // The common case first: nothing recorded at all, no key string built.
    return this.byOwner.size === 0 || !this.byOwner.has(unit(k, owner));
  }

  /**
   * Resolves once owner's calls on this lock have all settled, including any recorded
   * while it waits; rejects with a CommandTimeoutError when `timeout` runs out first.
   */
  async settled(k: LockKeys, owner: string, timeout: number, what: string): Promise<void> {
    const until = performance.now() + timeout;
    for (let tail = this.byOwner.get(unit(k, owner)); tail; tail = this.byOwner.get(unit(k, owner))) {
      await withTimeout(tail, Math.max(1, until - performance.now()), what, k.name);
    }
  }

  /** Owner's next acquisitions of this lock wait for `call` (and what it started) to settle. */
  record(k: LockKeys, owner: string, call: Promise<unknown>): void {
    const id = unit(k, owner);
    const before = this.byOwner.get(id);
    const tail: Promise<void> = Promise.allSettled(before ? [before, call] : [call]).then(() => {
      if (this.byOwner.get(id) === tail) this.byOwner.delete(id);
    });
    this.byOwner.set(id, tail);
  }
}

const unit = (k: LockKeys, owner: string) => `${k.id}\n${owner}`;
