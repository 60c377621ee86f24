import { LockClient } from 'holdfast';

// #region example
// Take a lock, hear of its loss, and nest: run() waits until the lock is held, the
// watchdog renews it while fn runs, and it is released when fn settles.
export async function quickStart(locks: LockClient, save: (token: number) => Promise<void>) {
  locks.on('lost', ({ name, reason }) => console.error(`lost ${name}: ${reason}`)); // stop writing now

  const lock = locks.getLock('order:42');
  await lock.run(async ({ token, signal }) => {
    await lock.run(() => save(token)); // nested: reenters the hold instead of waiting on it
    signal.throwIfAborted(); // aborted the moment the hold is lost
  });
}
// #endregion example
