import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * One Redis call outlived its bound ({@link ClientOptions.commandTimeout}: a dead or
 * stalled server), or an acquisition's reply came after the lease it granted had run
 * out (the grant is given back: by then another owner may hold the lock). Usually seen as the `cause` of a {@link LockUnavailableError}, or in
 * `acquireFailed`/`renewalFailed` events; the queries (isLocked, inspect, ...) reject
 * with it as it is.
 *
 * @example
 * ```ts
 * locks.on('acquireFailed', ({ error }) => {
 *   if (error instanceof CommandTimeoutError) metrics.increment('redis.timeouts');
 * });
 * ```
 */
export class CommandTimeoutError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_COMMAND_TIMEOUT';

  /**
   * @param what the call that got no reply.
   * @param ms its bound, in ms.
   * @param lockName the lock concerned, if any.
   */
  constructor(what: string, ms: number, lockName?: string) {
    super(`${what}${lockName === undefined ? '' : ` '${lockName}'`} got no reply within ${Math.ceil(ms)} ms`, lockName === undefined ? undefined : { lockName });
  }
}
