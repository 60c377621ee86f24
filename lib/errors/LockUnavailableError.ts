import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * Redis, or a majority of masters, could not be reached for this lock: the last
 * attempt of a wait failed (tryLock, run, acquire). `cause` is what failed (a
 * connection error, a {@link CommandTimeoutError}, ...); {@link QuorumError}, a
 * subclass, also carries every master's vote.
 *
 * @example
 * ```ts
 * try {
 *   await lock.tryLock(1_000);
 * } catch (e) {
 *   if (e instanceof LockUnavailableError) log.error(`Redis unreachable for ${e.lockName}`, e.cause);
 *   throw e;
 * }
 * ```
 */
export class LockUnavailableError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_UNAVAILABLE';

  /**
   * @param lockName the lock's name.
   * @param message what could not be done.
   * @param options `cause`: the last failure.
   */
  constructor(lockName: string, message: string, options?: { cause?: unknown }) {
    super(message, { lockName, cause: options?.cause });
  }
}
