import type { Primitive } from './primitive.js';

/** The reentrant lock (getLock): a hash owner -> levels; waiters queue in their own client. */
export const plainLock: Primitive = {
  kind: 'lock',
  waits: 'local',
  attempt: (store, keys, owner, lease, held, timeout, queued) => store.acquire(keys, owner, lease, timeout, held, queued),
  release: (store, keys, owner, held, timeout, wakeHead) => store.release(keys, owner, timeout, held, wakeHead),
};
