import { LockClient } from 'holdfast';

// #region example
// At most 10 calls to a rate-limited API at once, across every process. A batch call
// takes 2 permits; a caller that cannot get in within 5 s gets a LockTimeoutError.
// Permits are held under the watchdog's lease: a crashed process's come back within
// one lease, and a permit lost while held aborts `signal`.
export async function callQuota<T>(locks: LockClient, call: (signal: AbortSignal) => Promise<T>, batch = false): Promise<T> {
  const quota = locks.getSemaphore('api:quota', 10);
  return quota.run(({ signal }) => call(signal), { permits: batch ? 2 : 1, waitTime: 5_000 });
}
// #endregion example
