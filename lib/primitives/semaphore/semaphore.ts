import { LockError } from '../../errors/LockError.js';
import type { Primitive, Topology } from '../primitive.js';
import { MasterSemaphore } from './store.js';

/** A client's semaphores: the primitive of one acquisition (`permits` of `limit`), and the store its handles query. */
export interface Semaphores {
  kind(limit: number, permits: number): Primitive;
  readonly store: MasterSemaphore;
}

/**
 * The semaphore (getSemaphore): each acquisition is a hold of its own, its owner id
 * (used once) the permit's id in Redis, so permits never reenter. Waiters queue in
 * Redis in arrival order (waits 'queue', _semaphore.lua); a release grants the
 * freed permits on to the waiters at the head that fit, each told by one message. The
 * permit count lives in the primitive, made per acquisition, so its attempts know it.
 *
 * Permits carry no fencing token: several holders of one name are legitimate at once,
 * so a guarded resource could not refuse "older" ones as it does for a lock (the
 * hold's token is 0; a grant's number in its message only dates the grant).
 *
 * Built once per client (its store's ExactlyOnce counts each permit id's calls). Throws
 * up front where the topology has none: quorum mode (permits granted on majorities of
 * masters that each admit `limit` could add up to more than `limit`), and syncReplicas
 * (its grants would not be followed by WAIT).
 */
export function semaphores({ master, heartbeat }: Topology): Semaphores {
  if (!master || master.sync) {
    throw new LockError(
      !master
        ? 'semaphores need one master or a Cluster: in quorum mode, permits granted by majorities of masters that each admit the limit could exceed it'
        : 'semaphores are not supported with options.syncReplicas: their grants are not followed by WAIT',
    );
  }
  const sem = new MasterSemaphore(master);
  return {
    store: sem,
    kind: (limit, permits) => ({
      kind: 'semaphore',
      waits: 'queue',
      renewal: sem.renewal,
      unfenced: true,
      attempt: (keys, id, lease, _held, timeout, wait) => sem.acquire(keys, id, permits, limit, lease, heartbeat, wait, timeout),
      release: (keys, id, held, timeout) => sem.release(keys, id, timeout, held),
      leave: (keys, id, timeout, wait) => sem.leave(keys, id, timeout, wait),
      // Every permit of the name, whatever this acquisition's count (Semaphore.forceRelease, requestRelease).
      forceUnlock: (keys, timeout) => sem.forceRelease(keys, timeout),
      requestRelease: (keys, timeout) => sem.requestRelease(keys, timeout),
    }),
  };
}
