import { LockError } from './LockError.js';

/** A wait ran out: the lock stayed held by another owner for all of waitTime. */
export class LockTimeoutError extends LockError {
  readonly waitTime: number;

  constructor(lockName: string, waitTime: number) {
    super(`could not acquire '${lockName}' within ${waitTime} ms`, { lockName });
    this.waitTime = waitTime;
  }
}
