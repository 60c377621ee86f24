// #region example
import { type Lock, LockTimeoutError, LockUnavailableError } from 'holdfast';

// A busy lock is an answer; Redis out of reach is logged with its code and cause, and rethrown.
export async function runUnlessBusy(lock: Lock, work: () => Promise<void>, log: (...args: unknown[]) => void, waitTime = 5_000) {
  try {
    await lock.run(work, { waitTime });
    return 'done';
  } catch (e) {
    if (e instanceof LockTimeoutError) return 'busy'; // e.code === 'HOLDFAST_WAIT_TIMEOUT'
    if (e instanceof LockUnavailableError) log(e.code, e.cause); // QuorumError too
    throw e;
  }
}
// #endregion example
