import { fairLock } from './fair.js';
import { reentrantLock } from './plain.js';
import { MasterQueue } from './queue.js';
import type { Primitive, Topology } from '../primitive.js';

/** The lock, a multi-lock's names and the fair lock of one client, over one queue. */
export interface Locks {
  readonly lock: Primitive;
  readonly multi: Primitive;
  /** Throws in quorum mode (no queue). */
  fair(): Primitive;
}

/**
 * Built once per client: the three share the lock hash of a name, so one MasterQueue
 * (one ExactlyOnce) carries all their calls; quorum mode has no queue, and its lock
 * waits in the client.
 */
export function locks({ store, master, heartbeat }: Topology): Locks {
  const queue = master && new MasterQueue(master);
  const fair = queue && fairLock(queue, heartbeat);
  return {
    lock: reentrantLock(store, queue, heartbeat, 'lock'),
    multi: reentrantLock(store, queue, heartbeat, 'multi'),
    fair: () => fair ?? fairLock(undefined, heartbeat),
  };
}
