import type { Lock } from '../../handles/types.js';

/**
 * A read-write lock ({@link LockClient.getReadWriteLock}): any number of readers, or
 * one writer. Each side is the {@link Lock} API. Cheap: nothing is sent to Redis until
 * a side is used; each call of readLock()/writeLock() returns the same handle.
 *
 * - Reentrant per scope on both sides. A scope holding the write lock may also take the
 *   read lock, and may then release the write lock and keep reading (downgrade).
 * - Upgrade (a scope holding only the read lock asks for the write lock) rejects at once
 *   with a {@link LockError}: two readers upgrading would wait for each other forever.
 * - Writers do not starve: once a writer waits, new readers from other owners queue
 *   behind it (readers that queued before it go first).
 * - Each reader's hold has its own lease (or watchdog renewal): a crashed reader frees
 *   only its share, within its lease.
 * - Fencing tokens: a write hold mints one; a read hold's token is the current counter
 *   (the last writer's token, 0 when none is known).
 * - `inspect()`: `holders` are that side's owners (every reader, or the writer), each
 *   with its levels; `waiters` counts the owners queued for either side.
 *   `isLocked()`, `remainTimeToLive()`, `getHoldCount()` and `forceUnlock()` are about
 *   that side only.
 *
 * One master or a Cluster; quorum mode and `syncReplicas` are refused up front. Don't
 * use one name both as a read-write lock and as a lock or fair lock.
 */
export interface ReadWriteLock {
  /** The name, as given to getReadWriteLock. */
  readonly name: string;
  /** The shared side: held by any number of owners at once, never while a writer holds. */
  readLock(): Lock;
  /** The exclusive side: held by one owner, never while another owner reads. */
  writeLock(): Lock;
}
