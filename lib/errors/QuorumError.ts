import type { LockErrorCode } from './codes.js';
import { LockUnavailableError } from './LockUnavailableError.js';

/** What one master answered to one quorum operation. */
export type Vote =
  | { master: number; outcome: 'granted'; token: number }
  | { master: number; outcome: 'held'; pttl: number }
  | { master: number; outcome: 'error'; error: Error };

/**
 * A quorum operation could not gather a majority; `votes` says what each master
 * answered, and `cause` is the first master's error, if any answered with one.
 */
export class QuorumError extends LockUnavailableError {
  override readonly code: LockErrorCode = 'HOLDFAST_NO_QUORUM';
  readonly votes: readonly Vote[];
  readonly quorum: number;

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
