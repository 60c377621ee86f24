import { LockClient } from 'holdfast';

// #region example
// A job that cron starts on every host at the same minute: the first host to take the
// lock runs it, and keeps the lock until its lease ends (an hour: less than the cron
// period, more than the hosts' start times and clocks differ), so a host that starts
// late skips this round instead of running it again. A failed run lets the next try.
export async function nightlyReport(locks: LockClient, build: () => Promise<void>): Promise<'ran' | 'skipped'> {
  const lock = locks.getLock('jobs:nightly-report');
  if (!(await lock.tryLock(0, 3_600_000))) return 'skipped';
  try {
    await build();
  } catch (error) {
    await lock.unlock();
    throw error;
  }
  return 'ran'; // no unlock(): the lease keeps the round taken
}
// #endregion example
