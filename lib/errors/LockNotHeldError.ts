import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * unlock() from a scope or handle that does not hold the lock, or of a hold already
 * released (Redisson: IllegalMonitorStateException).
 *
 * @example
 * ```ts
 * await lock.unlock().catch((e) => {
 *   if (!(e instanceof LockNotHeldError)) throw e; // unlocking twice is harmless here
 * });
 * ```
 */
export class LockNotHeldError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_NOT_HELD';

  /**
   * @param lockName the lock's name.
   * @param detail why the caller does not hold it.
   */
  constructor(lockName: string, detail = 'it is not held by the current scope') {
    super(`cannot unlock '${lockName}': ${detail}`, { lockName });
  }
}
