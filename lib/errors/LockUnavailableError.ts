import { LockError } from './LockError.js';

/** Redis (or a quorum of masters) could not be reached; `cause` is the last failure. */
export class LockUnavailableError extends LockError {
  constructor(lockName: string, message: string, options?: { cause?: unknown }) {
    super(message, { lockName, cause: options?.cause });
  }
}
