import { LockError } from '../../errors/LockError.js';
import type { LockKeys } from '../../store/types.js';
import type { Primitive, Topology } from '../primitive.js';
import { queueKeys, writeHoldId } from '../../store/name-keys.js';
import { MasterReadWrite, type ReadWriteKeys } from './store.js';

/** One side of a read-write lock: its keys (the hold's id among them) and how it is taken. */
export interface ReadWriteSide {
  readonly keys: ReadWriteKeys;
  readonly primitive: Primitive;
}

/** A client's read-write locks: the two sides of the lock whose keys are `lock`. */
export type ReadWriteSides = (lock: LockKeys) => { read: ReadWriteSide; write: ReadWriteSide };

/**
 * The read-write locks of a client (getReadWriteLock), built once per client over one
 * MasterReadWrite (one master or a Cluster). Quorum mode has no single place for the
 * readers and the queue of waiters, and syncReplicas would need its WAIT behind each
 * grant and renewal: both are refused here, before anything is sent.
 *
 * The write hold lives in the name's lock hash (`holdfast:{name}`), the read holds in
 * `…:read` with their own expiries in `…:readers`; waiters of both sides share the
 * queue in Redis (_rwqueue.lua on _queue.lua); a release grants the writer or the
 * leading readers at its head in the same script. Each side is its own hold (keys.id `…#r`,
 * `…#w`), so a scope may hold both.
 */
export function readWriteLocks({ master, heartbeat }: Topology): ReadWriteSides {
  if (!master) return refuse('read-write locks need one master or a Cluster; quorum mode has no single place to keep the readers and the queue of waiters');
  if (master.sync) return refuse('read-write locks do not support the syncReplicas option (their grants and renewals are not followed by WAIT)');
  const rw = new MasterReadWrite(master);
  return (lock) => sides(rw, lock, heartbeat);
}

/** Every lock refused, by name. */
function refuse(reason: string): ReadWriteSides {
  return (lock) => {
    throw new LockError(reason, { lockName: lock.name });
  };
}

function sides(rw: MasterReadWrite, lock: LockKeys, heartbeat: number): { read: ReadWriteSide; write: ReadWriteSide } {
  const base = lock.key;
  const names = { write: base, read: `${base}:read`, readers: `${base}:readers`, readChannel: `${base}:next:r`, writeChannel: `${base}:next:w` };
  // The lock's keys read one by one: `lock` derives them on demand (NameKeys), so a spread would miss them.
  // Both sides wait on the write hash's queue.
  const shared = { name: lock.name, fence: lock.fence, channel: lock.channel, ...queueKeys(base), ...names };
  const read: ReadWriteKeys = { ...shared, side: 'r', key: names.read, id: `${base}#r`, wakeChannel: names.readChannel };
  const write: ReadWriteKeys = { ...shared, side: 'w', key: base, id: writeHoldId(base), wakeChannel: names.writeChannel };
  return { read: side(rw, read, heartbeat), write: side(rw, write, heartbeat) };
}

function side(rw: MasterReadWrite, keys: ReadWriteKeys, heartbeat: number): ReadWriteSide {
  const primitive: Primitive = {
    kind: keys.side === 'r' ? 'read' : 'write',
    waits: 'queue',
    attempt: (_keys, owner, lease, held, timeout, wait) => rw.acquire(keys, owner, lease, heartbeat, wait, timeout, held),
    release: (_keys, owner, held, timeout) => rw.release(keys, owner, timeout, held),
    leave: (_keys, owner, timeout, wait) => rw.leave(keys, owner, timeout, wait),
    forceUnlock: (_keys, timeout) => rw.forceUnlock(keys, timeout),
    requestRelease: (_keys, timeout) => rw.requestRelease(keys, timeout),
    inspect: (_keys, timeout) => rw.inspect(keys, timeout),
  };
  // A write hold is renewed as a lock's hash is (renew.lua on its key); a read hold by its own lease.
  return { keys, primitive: keys.side === 'r' ? { ...primitive, renewal: rw.readRenewal(keys) } : primitive };
}
