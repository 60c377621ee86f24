import { LockClient } from 'holdfast';

// #region example
// Renewal trouble is reported, never thrown into the void: log every failed attempt,
// and treat `lost` as "stop writing now" (scoped signals abort at the same moment).
export function watchLocks(locks: LockClient, log: { warn(msg: string): void; error(msg: string): void }) {
  locks.on('renewalFailed', ({ name, error, attempt }) => log.warn(`renewing ${name} failed (attempt ${attempt}): ${error.message}`));
  locks.on('lost', ({ name, reason }) => log.error(`lost ${name}: ${reason}`));
  locks.on('error', (error) => log.error(`holdfast: ${error.message}`));
}
// #endregion example
