import { LockError } from '../../errors/LockError.js';
import type { ReadWriteSide } from './read-write.js';
import { currentScope, type Scope } from '../../scope.js';
import type { LockKeys } from '../../store/types.js';
import type { LockOptions, ScopedOptions } from '../../options.js';
import { LockHandle } from '../lock/handle.js';
import type { LockPort } from '../../handles/port.js';
import type { Held, Lock } from '../../handles/types.js';
import type { ReadWriteLock } from './types.js';

/** The read side: run() from a scope that holds the write lock reads in that scope (no child to wait for it). */
class ReadLockHandle extends LockHandle {
  constructor(
    port: LockPort,
    name: string,
    side: ReadWriteSide,
    private readonly writeKeys: LockKeys,
  ) {
    super(port, name, side.primitive, side.keys);
  }

  protected override reentrantScope(): Scope | undefined {
    const scope = currentScope();
    if (!scope) return undefined;
    return super.reentrantScope() ?? (this.port.holdOf(this.writeKeys, this.port.ownerOf(scope))?.joinable ? scope : undefined);
  }
}

/**
 * The write side: refuses an upgrade before anything is sent. A scope that holds only
 * the read lock would wait for its own read hold to end (a child scope of run() too),
 * and two such scopes for each other.
 */
class WriteLockHandle extends LockHandle {
  constructor(
    port: LockPort,
    name: string,
    side: ReadWriteSide,
    private readonly readKeys: LockKeys,
  ) {
    super(port, name, side.primitive, side.keys);
  }

  protected override take(leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined) {
    this.refuseUpgrade();
    return super.take(leaseTime, waitTime, signal);
  }

  // lock() does not go through take() (its fast path keeps the hold in one step), so
  // it refuses an upgrade itself. The rest parameter keeps the caller's argument count,
  // which lock()'s argument check reads.
  override lock(...args: [leaseOrOptions?: number | LockOptions]): Promise<void> {
    try {
      this.refuseUpgrade();
    } catch (error) {
      return Promise.reject(error);
    }
    return super.lock(...args);
  }

  override acquire(options?: ScopedOptions): Promise<Held> {
    try {
      this.refuseUpgrade();
    } catch (error) {
      return Promise.reject(error);
    }
    return super.acquire(options);
  }

  protected override reentrantScope(): Scope | undefined {
    this.refuseUpgrade();
    return super.reentrantScope();
  }

  private refuseUpgrade(): void {
    const scope = currentScope();
    if (!scope) return;
    const owner = this.port.ownerOf(scope);
    if (this.port.holdOf(this.readKeys, owner)?.live && !this.port.holdOf(this.keys, owner)?.joinable) {
      throw new LockError(
        `cannot take the write lock of '${this.name}' in a scope that holds only its read lock: the upgrade would wait for its own read hold (release the read lock first)`,
        { lockName: this.name },
      );
    }
  }
}

/** getReadWriteLock's handle: one read and one write handle over the two sides. */
export class ReadWriteLockHandle implements ReadWriteLock {
  private readonly reader: Lock;
  private readonly writer: Lock;

  constructor(
    port: LockPort,
    readonly name: string,
    sides: { read: ReadWriteSide; write: ReadWriteSide },
  ) {
    this.reader = new ReadLockHandle(port, name, sides.read, sides.write.keys);
    this.writer = new WriteLockHandle(port, name, sides.write, sides.read.keys);
  }

  readLock(): Lock {
    return this.reader;
  }

  writeLock(): Lock {
    return this.writer;
  }
}
