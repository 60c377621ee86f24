import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * One Redis call outlived its bound (a dead or stalled server). Usually seen as the
 * `cause` of a LockUnavailableError, or in `acquireFailed`/`renewalFailed` events.
 */
export class CommandTimeoutError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_COMMAND_TIMEOUT';

  constructor(what: string, ms: number, lockName?: string) {
    super(`${what}${lockName === undefined ? '' : ` '${lockName}'`} got no reply within ${Math.ceil(ms)} ms`, lockName === undefined ? undefined : { lockName });
  }
}
