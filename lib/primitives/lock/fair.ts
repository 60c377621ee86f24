import { LockError } from '../../errors/LockError.js';
import { queuedLock } from './plain.js';
import type { Primitive } from '../primitive.js';
import type { Queue } from './queue.js';

/**
 * The fair lock (getFairLock): the reentrant lock's queue, granted in request order
 * across processes. The lock's window is 0 too (plain.ts), so in Redis the two are one;
 * they differ where the lock has no queue (the fair lock needs one, one master or a
 * Cluster, and throws in quorum mode) and in their holds' kind ('fair' in events and
 * metrics).
 */
export function fairLock(queue: Queue | undefined, heartbeat: number): Primitive {
  if (!queue) throw new LockError('fair locks need one master or a Cluster; quorum mode has none');
  return queuedLock(queue, heartbeat, 'fair');
}
