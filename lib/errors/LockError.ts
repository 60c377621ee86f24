import type { LockErrorCode } from './codes.js';

/**
 * Base class of every error holdfast raises about a lock (bad arguments aside, which
 * are `TypeError`s and `RangeError`s). Raised as itself when the client is closed (a
 * call on it, or a wait it cut short), when a last unlock could not reach Redis (the
 * lock then expires within its lease), and for what a topology cannot do (a fair lock
 * in quorum mode). Match on `instanceof` or {@link LockError.code}, never on messages.
 *
 * @example
 * ```ts
 * try {
 *   await lock.run(work, { waitTime: 5_000 });
 * } catch (e) {
 *   if (e instanceof LockTimeoutError) return 'busy';
 *   if (e instanceof LockError) log.error(e.code, e.lockName, e.message);
 *   throw e;
 * }
 * ```
 */
export class LockError extends Error {
  /** Stable identifier of the class of failure; each subclass sets its own. */
  readonly code: LockErrorCode = 'HOLDFAST_LOCK_ERROR';
  /** The lock's name, when the error is about one lock. */
  readonly lockName?: string;

  /**
   * @param message what went wrong.
   * @param options `cause`: the underlying error; `lockName`: the lock concerned.
   */
  constructor(message: string, options?: { cause?: unknown; lockName?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    if (options?.lockName !== undefined) this.lockName = options.lockName;
  }
}
