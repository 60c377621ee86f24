import type { LockErrorCode } from './codes.js';
import { LockUnavailableError } from './LockUnavailableError.js';

/** What one master answered to one quorum operation. */
export type Vote =
  | {
      /** The master's index in the array given to LockClient. */
      master: number;
      /** It granted the call (for a read: it answered). */
      outcome: 'granted';
      /** The token it granted with (0 when not an acquisition). */
      token: number;
    }
  | {
      /** The master's index in the array given to LockClient. */
      master: number;
      /** Another owner holds the lock there. */
      outcome: 'held';
      /** Milliseconds left on that owner's lease there. */
      pttl: number;
    }
  | {
      /** The master's index in the array given to LockClient. */
      master: number;
      /** It failed, had not answered when the outcome was decided, or sat out after a restart. */
      outcome: 'error';
      /** What it failed with. */
      error: Error;
    };

/**
 * A quorum operation could not gather a majority; `votes` says what each master
 * answered, and `cause` is the first master's error, if any answered with one.
 *
 * @example
 * ```ts
 * try {
 *   await lock.tryLock(1_000);
 * } catch (e) {
 *   if (e instanceof QuorumError) for (const v of e.votes) log.warn(`master ${v.master}: ${v.outcome}`);
 *   throw e;
 * }
 * ```
 */
export class QuorumError extends LockUnavailableError {
  override readonly code: LockErrorCode = 'HOLDFAST_NO_QUORUM';
  /** What each master answered, in the order of the masters. */
  readonly votes: readonly Vote[];
  /** How many masters make a majority: floor(N/2)+1. */
  readonly quorum: number;

  /**
   * @param lockName the lock's name.
   * @param action what could not be done (e.g. `acquire`).
   * @param quorum how many masters make a majority.
   * @param votes what each master answered.
   */
  constructor(lockName: string, action: string, quorum: number, votes: readonly Vote[]) {
    const summary = votes
      .map((v) => `#${v.master} ${v.outcome === 'error' ? `error (${v.error.message})` : v.outcome === 'held' ? `held by another owner (pttl ${v.pttl} ms)` : 'granted'}`)
      .join(', ');
    const firstError = votes.find((v) => v.outcome === 'error');
    super(lockName, `cannot ${action} '${lockName}': ${quorum} of ${votes.length} masters needed; ${summary}`, {
      cause: firstError?.outcome === 'error' ? firstError.error : undefined,
    });
    this.votes = votes;
    this.quorum = quorum;
  }
}
