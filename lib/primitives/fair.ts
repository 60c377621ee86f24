import { LockError } from '../errors/LockError.js';
import type { FairQueue, Store } from '../store/types.js';
import type { Primitive } from './primitive.js';

/**
 * The fair lock (getFairLock): granted in request order across processes, through a
 * queue in Redis. Needs a store with that capability (one master or a Cluster).
 */
export function fairLock(store: Store, heartbeat: number): Primitive {
  if (!store.fairQueue) throw new LockError('fair locks need one master or a Cluster; quorum mode has none');
  const queue: FairQueue = store.fairQueue;
  return {
    kind: 'fair',
    waits: 'fairQueue',
    attempt: (_store, keys, owner, lease, held, timeout, queued, wait) => queue.acquire(keys, owner, lease, heartbeat, queued ? (wait ?? '') : undefined, timeout, held),
    release: (_store, keys, owner, held, timeout) => queue.release(keys, owner, timeout, held),
    leave: (_store, keys, owner, timeout, wait) => queue.leave(keys, owner, timeout, wait),
  };
}
