import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * Redis, or a majority of masters, could not be reached for this lock: the last
 * attempt of a wait failed. `cause` is what failed (a connection error, a
 * CommandTimeoutError, ...); QuorumError, a subclass, also carries every master's vote.
 */
export class LockUnavailableError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_UNAVAILABLE';

  constructor(lockName: string, message: string, options?: { cause?: unknown }) {
    super(message, { lockName, cause: options?.cause });
  }
}
