import type { LockErrorCode } from './codes.js';

/** Base class of every error holdfast raises about a lock (bad arguments aside). */
export class LockError extends Error {
  /** Stable identifier of the class of failure; each subclass sets its own. */
  readonly code: LockErrorCode = 'HOLDFAST_LOCK_ERROR';
  /** The lock's name, when the error is about one lock. */
  readonly lockName?: string;

  constructor(message: string, options?: { cause?: unknown; lockName?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    if (options?.lockName !== undefined) this.lockName = options.lockName;
  }
}
