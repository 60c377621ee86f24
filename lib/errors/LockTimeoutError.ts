import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * A wait ran out while another owner held the lock (run/acquire with `waitTime`).
 * Redis answered throughout; when it did not, the wait ends in LockUnavailableError.
 */
export class LockTimeoutError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_WAIT_TIMEOUT';
  /** The wait budget that ran out, in ms. */
  readonly waitTime: number;

  constructor(lockName: string, waitTime: number) {
    super(`could not acquire '${lockName}' within ${waitTime} ms: another owner holds it`, { lockName });
    this.waitTime = waitTime;
  }
}
