import { LockError } from '../../errors/LockError.js';
import type { Store } from '../../store/types.js';
import { reentrantLock } from './plain.js';
import type { Primitive } from '../primitive.js';

/**
 * The fair lock (getFairLock): the reentrant lock's queue with no barging window, so
 * the lock is granted in request order across processes. Needs the queue (one master or
 * a Cluster).
 */
export function fairLock(store: Store, heartbeat: number): Primitive {
  if (!store.queue) throw new LockError('fair locks need one master or a Cluster; quorum mode has none');
  return reentrantLock(store, heartbeat, 'fair', 0);
}
