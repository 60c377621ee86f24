// What one name can be held as, for status, ls and release: the lock hash (getLock,
// getFairLock, and a read-write lock's writer, which keeps its hold there), a read-write
// lock's read holds, and a semaphore's permits. Redis does not say which kind took a
// name, so each is looked at. Quorum mode has neither read-write locks nor semaphores
// (the library refuses them there): only the lock is.
import type { Lock, LockClient, LockInfo, Semaphore, SemaphoreInfo } from '../index.js';

/**
 * The limit the CLI's semaphore handles are made with. It is never used: inspect(),
 * requestRelease() and forceRelease() act on what Redis keeps, whatever the handle's
 * limit (the CLI does not know the name's).
 */
const ANY_LIMIT = 1;

/** `holdfast status NAME --json`: lock.inspect(), with the read holds and the permits when the name has some. */
export interface NameStatus extends LockInfo {
  /** readLock().inspect() of the read-write lock NAME, when readers hold it. */
  read?: LockInfo;
  /** getSemaphore(NAME).inspect(), when permits are held or waited for. */
  semaphore?: SemaphoreInfo;
}

export interface NameHandles {
  lock: Lock;
  read?: Lock;
  semaphore?: Semaphore;
}

/** Handles on every kind `name` may be held as; `quorum`: the lock alone. */
export function handlesOf(locks: LockClient, name: string, quorum: boolean): NameHandles {
  const lock = locks.getLock(name);
  if (quorum) return { lock };
  return { lock, read: locks.getReadWriteLock(name).readLock(), semaphore: locks.getSemaphore(name, ANY_LIMIT) };
}

/**
 * What holds `name` now. `look` leaves out the kinds known to be absent (ls saw no key
 * of theirs), saving their round trips.
 */
export async function statusOf(handles: NameHandles, look: { read: boolean; semaphore: boolean } = { read: true, semaphore: true }): Promise<NameStatus> {
  const [info, read, semaphore] = await Promise.all([
    handles.lock.inspect(),
    look.read ? handles.read?.inspect() : undefined,
    look.semaphore ? handles.semaphore?.inspect() : undefined,
  ]);
  const status: NameStatus = { ...info };
  if (read?.locked) status.read = read;
  if (semaphore && (semaphore.used > 0 || semaphore.waiters > 0)) status.semaphore = semaphore;
  return status;
}

/** Held as anything. */
export function isHeld(status: NameStatus): boolean {
  return status.locked || status.read !== undefined || (status.semaphore?.used ?? 0) > 0;
}
