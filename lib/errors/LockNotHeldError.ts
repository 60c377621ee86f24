import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/** unlock() from a scope or handle that does not hold the lock (Redisson: IllegalMonitorStateException). */
export class LockNotHeldError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_NOT_HELD';

  constructor(lockName: string, detail = 'it is not held by the current scope') {
    super(`cannot unlock '${lockName}': ${detail}`, { lockName });
  }
}
