import type { Store } from '../../store/types.js';
import type { Primitive, PrimitiveKind } from '../primitive.js';
import type { Queue } from './queue.js';

/**
 * The reentrant lock (getLock; kind 'multi' for one name of a multi-lock, so that events
 * and metrics tell those holds apart): a hash owner -> levels. On one master or a
 * Cluster its waiters queue in Redis (`queue`), and a release grants the head: its
 * barging window is 0, measured against windows of 2 to 15 ms
 * (docs/guides/performance.md), so in Redis it is the fair lock. In quorum mode (no
 * queue) they wait in their client for the 'released' message.
 */
export function reentrantLock(store: Store, queue: Queue | undefined, heartbeat: number, kind: PrimitiveKind): Primitive {
  if (!queue) {
    return {
      kind,
      waits: 'client',
      attempt: (keys, owner, lease, held, timeout) => store.acquire(keys, owner, lease, timeout, held),
      release: (keys, owner, held, timeout) => store.release(keys, owner, timeout, held),
    };
  }
  return queuedLock(queue, heartbeat, kind);
}

/** The lock over its queue in Redis (one master or a Cluster): waits 'queue'. */
export function queuedLock(queue: Queue, heartbeat: number, kind: PrimitiveKind): Primitive {
  return {
    kind,
    waits: 'queue',
    attempt: (keys, owner, lease, held, timeout, wait) => queue.acquire(keys, owner, lease, heartbeat, wait, timeout, held),
    release: (keys, owner, held, timeout) => queue.release(keys, owner, timeout, held),
    leave: (keys, owner, timeout, wait) => queue.leave(keys, owner, timeout, wait),
    forceUnlock: (keys, timeout) => queue.forceUnlock(keys, timeout),
    inspect: (keys, timeout) => queue.inspect(keys, timeout),
    attemptAll: (keys, owner, lease, timeout) => queue.acquireAll?.(keys, owner, lease, timeout),
    releaseAll: (keys, owner, timeout) => queue.releaseAll?.(keys, owner, timeout),
  };
}
