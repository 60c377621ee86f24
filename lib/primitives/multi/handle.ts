import type { Hold } from '../../engine/hold.js';
import { LockLostError } from '../../errors/LockLostError.js';
import { LockNotHeldError } from '../../errors/LockNotHeldError.js';
import { LockTimeoutError } from '../../errors/LockTimeoutError.js';
import { describe, resolveLockArgs, resolveScopedArgs, resolveTryLockArgs, type LockOptions, type ScopedOptions, type TryLockOptions } from '../../options.js';
import type { Primitive } from '../primitive.js';
import { currentScope, newScope, runInScope, type Scope } from '../../scope.js';
import type { LockKeys } from '../../store/types.js';
import { HoldGroup, takeAll } from './take.js';
import type { MultiHeld, MultiHeldContext, MultiLock } from './types.js';
import type { LockPort } from '../../handles/port.js';
import type { LockInfo } from '../../handles/types.js';
import { LockHandle } from '../lock/handle.js';

/**
 * The Lock API over several names, through the client's port: each name is one hold of
 * the engine (reentry, watchdog, loss and events per name); this handle takes them
 * together (take.ts: in one call where they share a master) and gives them back together. Owners are chosen as
 * LockHandle chooses them.
 */
export class MultiLockHandle implements MultiLock {
  /** Keys in acquisition order (sorted by name). */
  private readonly ordered: readonly LockKeys[];
  /** One per name, in the given order, for the queries. */
  private readonly single: readonly LockHandle[];
  /** Groups this handle took outside every scope, oldest first. */
  private readonly unscoped: HoldGroup[] = [];

  constructor(
    private readonly port: LockPort,
    readonly names: readonly string[],
    ordered: readonly string[],
    private readonly primitive: Primitive,
  ) {
    this.ordered = ordered.map((name) => port.keysOf(name));
    this.single = names.map((name) => new LockHandle(port, name, primitive));
  }

  async lock(leaseOrOptions?: number | LockOptions): Promise<void> {
    const o = resolveLockArgs(leaseOrOptions, arguments.length);
    await this.take(o.leaseTime, undefined, o.signal);
  }

  async tryLock(waitTimeOrOptions?: number | TryLockOptions, leaseTime?: number): Promise<boolean> {
    const o = resolveTryLockArgs(waitTimeOrOptions, leaseTime, arguments.length);
    return (await this.take(o.leaseTime, o.waitTime, o.signal)) !== null;
  }

  async unlock(): Promise<void> {
    this.port.assertOpen();
    const scope = currentScope();
    if (scope) {
      const owner = this.port.ownerOf(scope);
      const holds: Hold[] = [];
      // Every name or none: a scope missing one releases nothing.
      for (const keys of this.ordered) {
        const hold = this.port.holdOf(keys, owner);
        if (!hold) throw new LockNotHeldError(keys.name, 'the current scope does not hold it (a name of this multi-lock)');
        holds.push(hold);
      }
      return new HoldGroup(holds).release(this.port);
    }
    const live = this.unscoped.findIndex((g) => g.live);
    const [group] = this.unscoped.splice(live === -1 ? 0 : live, 1);
    if (!group) throw new LockNotHeldError(this.names.join(', '), 'this handle holds it in no scope');
    return group.release(this.port);
  }

  async forceUnlock(): Promise<boolean> {
    this.port.assertOpen();
    return this.every((lock) => lock.forceUnlock(), (existed) => existed.some(Boolean));
  }

  async requestRelease(): Promise<number> {
    this.port.assertOpen();
    return this.every((lock) => lock.requestRelease(), (asked) => asked.reduce((a, b) => a + b, 0));
  }

  async isLocked(): Promise<boolean> {
    this.port.assertOpen();
    return this.every((lock) => lock.isLocked(), (locked) => locked.every(Boolean));
  }

  async isHeldByCurrentScope(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  async getHoldCount(): Promise<number> {
    this.port.assertOpen();
    const scope = currentScope();
    const owner = scope ? this.port.ownerOf(scope) : this.unscoped.find((g) => g.live)?.owner;
    if (owner === undefined) return 0;
    const counts = await Promise.all(this.ordered.map((keys) => this.port.holdCount(keys, owner)));
    return Math.min(...counts);
  }

  async remainTimeToLive(): Promise<number> {
    this.port.assertOpen();
    const ttls = await Promise.all(this.single.map((lock) => lock.remainTimeToLive()));
    if (ttls.includes(-2)) return -2;
    const expiring = ttls.filter((t) => t >= 0);
    return expiring.length === 0 ? -1 : Math.min(...expiring);
  }

  async inspect(): Promise<readonly LockInfo[]> {
    this.port.assertOpen();
    return Promise.all(this.single.map((lock) => lock.inspect()));
  }

  async run<T>(fn: (context: MultiHeldContext) => T | Promise<T>, options?: ScopedOptions): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError(`run(fn): fn must be a function, got ${describe(fn)}`);
    const o = resolveScopedArgs(options, 'run() options');
    this.port.assertOpen();
    const scope = this.reentrantScope() ?? newScope();
    return runInScope(scope, async () => {
      const group = await this.takeAs(scope, o.leaseTime, o.waitTime, o.signal);
      let result: T;
      try {
        result = await fn({ signal: group.signal, tokens: group.tokens, names: this.names });
      } catch (error) {
        await group.release(this.port).catch((releaseError: unknown) => {
          if (releaseError instanceof LockLostError && error instanceof Error && error.cause === undefined) error.cause = releaseError;
        });
        throw error;
      }
      await group.release(this.port);
      return result;
    });
  }

  async acquire(options?: ScopedOptions): Promise<MultiHeld> {
    const o = resolveScopedArgs(options, 'acquire() options');
    this.port.assertOpen();
    const scope = currentScope() ?? newScope();
    const group = await this.takeAs(scope, o.leaseTime, o.waitTime, o.signal);
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await group.release(this.port);
    };
    return {
      names: this.names,
      tokens: group.tokens,
      signal: group.signal,
      release,
      run: async <T>(fn: () => T | Promise<T>) => {
        if (typeof fn !== 'function') throw new TypeError(`held.run(fn): fn must be a function, got ${describe(fn)}`);
        if (released || !group.live) throw new LockNotHeldError(this.names.join(', '), 'this hold was released or lost');
        return runInScope(scope, async () => fn());
      },
      [Symbol.asyncDispose]: release,
    };
  }

  /** All names for the scope's owner, or a LockTimeoutError naming the one still held elsewhere. */
  private async takeAs(scope: Scope, leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined): Promise<HoldGroup> {
    const taken = await takeAll(this.port, this.primitive, this.ordered, this.port.ownerOf(scope), leaseTime, waitTime, signal);
    if (!(taken instanceof HoldGroup)) throw new LockTimeoutError(taken.timedOut, waitTime ?? 0);
    return taken;
  }

  private async take(leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined): Promise<HoldGroup | null> {
    this.port.assertOpen();
    const scope = currentScope();
    const owner = scope ? this.port.ownerOf(scope) : this.port.unscopedOwner();
    const taken = await takeAll(this.port, this.primitive, this.ordered, owner, leaseTime, waitTime, signal);
    if (!(taken instanceof HoldGroup)) return null;
    if (!scope) this.unscoped.push(taken);
    return taken;
  }

  /**
   * The current scope when it already holds one of the names: run() then reenters
   * there. A child scope would wait for its parent's hold of that name forever.
   */
  private reentrantScope(): Scope | undefined {
    const scope = currentScope();
    if (!scope) return undefined;
    const owner = this.port.ownerOf(scope);
    return this.ordered.some((keys) => this.port.holdOf(keys, owner)?.joinable) ? scope : undefined;
  }

  /**
   * One query per name, all sent before any is awaited; every one settles before the
   * first failure (if any) is thrown, so none is left unhandled.
   */
  private async every<T, R>(query: (lock: LockHandle) => Promise<T>, combine: (values: T[]) => R): Promise<R> {
    const settled = await Promise.allSettled(this.single.map(query));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return combine(settled.map((s) => (s as PromiseFulfilledResult<T>).value));
  }
}
