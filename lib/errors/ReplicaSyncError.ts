import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * Fewer replicas than `syncReplicas.min` acknowledged an acquisition or a renewal
 * within `syncReplicas.timeout` (or WAIT itself failed, given as `cause`): the
 * acquisition was given back, the renewal did not count. Seen as the `cause` of a
 * {@link LockUnavailableError}, or in `acquireFailed`/`renewalFailed` events.
 *
 * @example
 * ```ts
 * import { ReplicaSyncError } from 'holdfast';
 *
 * locks.on('renewalFailed', ({ error }) => {
 *   if (error instanceof ReplicaSyncError) log.warn('replicas lag', error.acknowledged);
 * });
 * ```
 */
export class ReplicaSyncError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_REPLICA_SYNC';

  /**
   * @param what the call (acquire, renewal).
   * @param acknowledged replicas that acknowledged it (0 when WAIT failed).
   * @param min replicas required.
   * @param ms WAIT's timeout.
   */
  constructor(
    what: string,
    readonly acknowledged: number,
    min: number,
    ms: number,
    options?: { cause?: unknown; lockName?: string },
  ) {
    super(
      `${what}${options?.lockName === undefined ? '' : ` '${options.lockName}'`}: ${acknowledged} of ${min} replica(s) acknowledged within ${ms} ms${options?.cause instanceof Error ? ` (${options.cause.message})` : ''}`,
      options,
    );
  }
}
