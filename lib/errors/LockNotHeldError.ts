import { LockError } from './LockError.js';

/** unlock() from a scope or handle that does not hold the lock (Redisson: IllegalMonitorStateException). */
export class LockNotHeldError extends LockError {
  constructor(lockName: string, detail = 'it is not held by the current scope') {
    super(`cannot unlock '${lockName}': ${detail}`, { lockName });
  }
}
