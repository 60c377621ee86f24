import { LockClient } from 'holdfast';

// #region example
// A job that many hosts start at once: whoever gets the lock within 2 s runs it,
// with a fixed 60 s lease (no watchdog); the others skip this round.
export async function nightlyReport(locks: LockClient, build: () => Promise<void>): Promise<'ran' | 'skipped'> {
  const lock = locks.getLock('jobs:nightly-report');
  if (!(await lock.tryLock(2_000, 60_000))) return 'skipped';
  try {
    await build();
    return 'ran';
  } finally {
    await lock.unlock();
  }
}
// #endregion example
