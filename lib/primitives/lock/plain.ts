import type { Store } from '../../store/types.js';
import type { Primitive, PrimitiveKind } from '../primitive.js';
import type { Queue } from './queue.js';

/**
 * How long a new head of the lock's queue may be passed over by whoever asks first for
 * the free lock from another process than the head's (scripts/_queue.lua): a process
 * that takes the lock again at once keeps going for that long without a wake-up of
 * another process, which costs more than a section; after it, a release grants the
 * head. A head in the releaser's own process is granted at once. The fair lock's window
 * is 0.
 */
export const BARGING_WINDOW = 5;

/**
 * The reentrant lock (getLock; kind 'multi' for one name of a multi-lock, so that events
 * and metrics tell those holds apart, the fair lock with window 0): a hash owner ->
 * levels. On one master or a Cluster its waiters queue in Redis (`queue`); in quorum
 * mode (no queue) they wait in their client for the 'released' message.
 */
export function reentrantLock(store: Store, queue: Queue | undefined, heartbeat: number, kind: PrimitiveKind, window: number): Primitive {
  if (!queue) {
    return {
      kind,
      waits: 'client',
      attempt: (keys, owner, lease, held, timeout) => store.acquire(keys, owner, lease, timeout, held),
      release: (keys, owner, held, timeout) => store.release(keys, owner, timeout, held),
    };
  }
  return queuedLock(queue, heartbeat, kind, window);
}

/** The lock over its queue in Redis (one master or a Cluster): waits 'queue'. */
export function queuedLock(queue: Queue, heartbeat: number, kind: PrimitiveKind, window: number): Primitive {
  return {
    kind,
    waits: 'queue',
    attempt: (keys, owner, lease, held, timeout, wait) => queue.acquire(keys, owner, lease, heartbeat, wait, window, timeout, held),
    release: (keys, owner, held, timeout) => queue.release(keys, owner, timeout, held, window),
    leave: (keys, owner, timeout, wait) => queue.leave(keys, owner, timeout, wait, window),
    forceUnlock: (keys, timeout) => queue.forceUnlock(keys, timeout),
    inspect: (keys, timeout) => queue.inspect(keys, timeout),
    attemptAll: (keys, owner, lease, timeout) => queue.acquireAll?.(keys, owner, lease, timeout),
    releaseAll: (keys, owner, timeout) => queue.releaseAll?.(keys, owner, timeout, window),
  };
}
