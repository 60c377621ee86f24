import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

export type LossReason = 'expired' | 'taken' | 'quorum' | 'deleted';

const explain: Record<LossReason, string> = {
  expired: 'its lease ended before a renewal succeeded',
  taken: 'another owner holds it now',
  quorum: 'a majority of masters no longer grants it',
  deleted: 'its key was deleted',
};

/** The hold is no longer ours: raised by unlock() and run() after a loss, and used as the reason of aborted scoped signals. */
export class LockLostError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_LOCK_LOST';
  readonly reason: LossReason;
  readonly owner: string;

  constructor(lockName: string, owner: string, reason: LossReason, cause?: unknown) {
    super(`lock '${lockName}' was lost: ${explain[reason]}`, { lockName, cause });
    this.reason = reason;
    this.owner = owner;
  }
}
