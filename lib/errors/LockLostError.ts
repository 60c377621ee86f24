import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * Why a hold was lost: `expired` (its lease ended before a renewal succeeded, or a
 * lease given without the watchdog ran out), `taken` (another owner holds it now),
 * `quorum` (a majority of masters no longer grants it), `deleted` (its key was
 * deleted, e.g. by forceUnlock).
 */
export type LossReason = 'expired' | 'taken' | 'quorum' | 'deleted';

const explain: Record<LossReason, string> = {
  expired: 'its lease ended before a renewal succeeded',
  taken: 'another owner holds it now',
  quorum: 'a majority of masters no longer grants it',
  deleted: 'its key was deleted',
};

/**
 * The hold is no longer ours: raised by unlock(), `held.release()` and run() after a
 * loss, and the `reason` of the hold's aborted signal. The `lost` event carries it too.
 *
 * @example
 * ```ts
 * try {
 *   await lock.unlock();
 * } catch (e) {
 *   if (e instanceof LockLostError) log.warn(`${e.lockName} was lost (${e.reason}) before unlock`);
 *   else throw e;
 * }
 * ```
 */
export class LockLostError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_LOCK_LOST';
  /** Why the hold was lost. */
  readonly reason: LossReason;
  /** The owner id that held it. */
  readonly owner: string;

  /**
   * @param lockName the lock's name.
   * @param owner the owner id that held it.
   * @param reason why it was lost.
   * @param cause the underlying error, if any.
   */
  constructor(lockName: string, owner: string, reason: LossReason, cause?: unknown) {
    super(`lock '${lockName}' was lost: ${explain[reason]}`, { lockName, cause });
    this.reason = reason;
    this.owner = owner;
  }
}
