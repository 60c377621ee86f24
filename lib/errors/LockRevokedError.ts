import type { LockErrorCode } from './codes.js';
import { LockError } from './LockError.js';

/**
 * Someone asked this hold to let go (`requestRelease()`, `holdfast release NAME`): the
 * `reason` of the hold's aborted signal. The hold is still held: the holder finishes
 * what it must and unlocks (a `run()` releases when its function settles).
 *
 * @example
 * ```ts
 * import { LockRevokedError } from 'holdfast';
 *
 * await lock.run(async ({ signal }) => {
 *   for (const entry of ['a', 'b', 'c']) {
 *     if (signal.aborted && signal.reason instanceof LockRevokedError) break; // asked to let go
 *     await ledger.write(entry, 1);
 *   }
 * });
 * ```
 */
export class LockRevokedError extends LockError {
  override readonly code: LockErrorCode = 'HOLDFAST_REVOKED';
  /** Always `revoked`: the hold was asked to let go, not lost. */
  readonly reason = 'revoked' as const;
  /** The owner id that was asked. */
  readonly owner: string;

  /**
   * @param lockName the lock's name.
   * @param owner the owner id that was asked.
   */
  constructor(lockName: string, owner: string) {
    super(`lock '${lockName}' was asked to let go (requestRelease)`, { lockName });
    this.owner = owner;
  }
}
