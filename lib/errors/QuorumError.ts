import { LockError } from './LockError.js';

/** What one master answered to one quorum operation. */
export type Vote =
  | { master: number; outcome: 'granted'; token: number }
  | { master: number; outcome: 'held'; pttl: number }
  | { master: number; outcome: 'error'; error: Error };

/** A quorum operation could not gather a majority; `votes` says what each master answered. */
export class QuorumError extends LockError {
  readonly votes: readonly Vote[];
  readonly quorum: number;

  constructor(lockName: string, action: string, quorum: number, votes: readonly Vote[]) {
    const summary = votes
      .map((v) => `#${v.master} ${v.outcome === 'error' ? `error (${v.error.message})` : v.outcome === 'held' ? `held by another owner (pttl ${v.pttl} ms)` : 'granted'}`)
      .join(', ');
    super(`cannot ${action} '${lockName}': ${quorum} of ${votes.length} masters needed; ${summary}`, { lockName });
    this.votes = votes;
    this.quorum = quorum;
  }
}
