import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * A wait ran out while another owner held the lock (run/acquire with `waitTime`;
 * tryLock answers `false` instead). Redis answered the last attempt; when it did not,
 * the wait ends in {@link LockUnavailableError}.
 *
 * @example
 * ```ts
 * try {
 *   await lock.run(work, { waitTime: 5_000 });
 * } catch (e) {
 *   if (e instanceof LockTimeoutError) return 'busy'; // e.waitTime === 5000
 *   throw e;
 * }
 * ```
 */
export class LockTimeoutError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_WAIT_TIMEOUT';
  /** The wait budget that ran out, in ms. */
  readonly waitTime: number;

  /**
   * @param lockName the lock's name.
   * @param waitTime the wait budget that ran out, in ms.
   */
  constructor(lockName: string, waitTime: number) {
    super(`could not acquire '${lockName}' within ${waitTime} ms: another owner holds it`, { lockName });
    this.waitTime = waitTime;
  }
}
