import { LockError } from '../../errors/LockError.js';
import { queuedLock } from './plain.js';
import type { Primitive } from '../primitive.js';
import type { Queue } from './queue.js';

/**
 * The fair lock (getFairLock): the reentrant lock's queue with no barging window, so
 * the lock is granted in request order across processes. Needs the queue (one master or
 * a Cluster): throws in quorum mode.
 */
export function fairLock(queue: Queue | undefined, heartbeat: number): Primitive {
  if (!queue) throw new LockError('fair locks need one master or a Cluster; quorum mode has none');
  return queuedLock(queue, heartbeat, 'fair', 0);
}
