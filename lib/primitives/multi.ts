import type { Primitive } from './primitive.js';

/**
 * One name of a multi-lock (getMultiLock): the reentrant lock's scripts and local
 * waits, so a multi-lock's name excludes getLock() of the same name and reenters it in
 * the same scope. Only the kind differs, so that events and metrics tell the holds of
 * a multi-lock from plain ones. Taking the names together is the handle's job
 * (handles/multi-take.ts): the engine sees one name at a time.
 */
export const multiLockName: Primitive = {
  kind: 'multi',
  waits: 'local',
  attempt: (store, keys, owner, lease, held, timeout, queued) => store.acquire(keys, owner, lease, timeout, held, queued),
  release: (store, keys, owner, held, timeout) => store.release(keys, owner, timeout, held),
};
