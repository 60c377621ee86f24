import { LockClient } from 'holdfast';

// #region example
// Who holds the quota's permits, as Redis keeps it, and asking them to let go.
export async function reportQuota(locks: LockClient) {
  const quota = locks.getSemaphore('api:quota', 10);
  const { used, limit, holders, waiters } = await quota.inspect();
  console.log(`${used}/${limit} permits held by ${holders.map((h) => `${h.host} pid ${h.pid}`).join(', ')}; ${waiters} waiting`);
  if (used > 0) console.log(`asked ${await quota.requestRelease()} holders to let go`);
}
// #endregion example
