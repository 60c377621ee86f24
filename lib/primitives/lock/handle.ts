import type { Hold } from '../../engine/hold.js';
import { LockLostError } from '../../errors/LockLostError.js';
import { LockNotHeldError } from '../../errors/LockNotHeldError.js';
import { LockTimeoutError } from '../../errors/LockTimeoutError.js';
import type { LockEvents } from '../../events.js';
import { describe, resolveLockArgs, resolveScopedArgs, resolveTryLockArgs, type LockOptions, type ScopedOptions, type TryLockOptions } from '../../options.js';
import type { Primitive } from '../primitive.js';
import { currentScope, newScope, runInScope, type Scope } from '../../scope.js';
import type { LockKeys } from '../../store/types.js';
import { listen } from '../../handles/listen.js';
import type { LockPort } from '../../handles/port.js';
import { ownerOrigin } from '../../handles/owner-id.js';
import type { Held, HeldContext, Lock, LockInfo } from '../../handles/types.js';

/** The Lock API over one name and one primitive (plain or fair), through the client's port. */
export class LockHandle implements Lock {
  readonly name: string;
  protected readonly keys: LockKeys;
  /**
   * Holds this handle took outside every scope, oldest first; undefined while none
   * (a handle keeps no empty array: a first push() would reserve 17 slots, 150 bytes
   * per held lock, where `[hold]` reserves one).
   */
  private unscoped: Hold[] | undefined;

  constructor(
    protected readonly port: LockPort,
    name: string,
    private readonly primitive: Primitive,
    /** Absent: the name's lock keys (port.keysOf). */
    keys?: LockKeys,
  ) {
    this.name = name;
    this.keys = keys ?? port.keysOf(name);
  }

  lock(leaseOrOptions?: number | LockOptions): Promise<void> {
    try {
      const o = resolveLockArgs(leaseOrOptions, arguments.length);
      this.port.assertOpen();
      const scope = currentScope();
      if (scope) return this.port.acquire(this.primitive, this.keys, this.port.ownerOf(scope), o.leaseTime, undefined, o.signal).then(settled);
      // take() inlined: one step keeps the hold and settles the lock(), not two.
      return this.port.acquire(this.primitive, this.keys, this.port.unscopedOwner(), o.leaseTime, undefined, o.signal).then(this.keep);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Keeps a hold taken outside every scope (resolves a lock() with nothing). */
  private readonly keep = (hold: Hold | null): void => {
    if (hold) this.adopt(hold);
  };

  private adopt(hold: Hold): void {
    if (this.unscoped) this.unscoped.push(hold);
    else this.unscoped = [hold];
  }

  async tryLock(waitTimeOrOptions?: number | TryLockOptions, leaseTime?: number): Promise<boolean> {
    const o = resolveTryLockArgs(waitTimeOrOptions, leaseTime, arguments.length);
    return (await this.take(o.leaseTime, o.waitTime, o.signal)) !== null;
  }

  // Not async: the release's own promise is returned, not one resolved with it (which
  // costs two more microtask steps on every unlock).
  unlock(): Promise<void> {
    try {
      return this.port.release(this.holdToUnlock());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The hold an unlock() from here drops a level of; throws when there is none. */
  private holdToUnlock(): Hold {
    this.port.assertOpen();
    const scope = currentScope();
    if (scope) {
      const hold = this.port.holdOf(this.keys, this.port.ownerOf(scope));
      if (!hold) throw new LockNotHeldError(this.name);
      return hold;
    }
    // The oldest live hold goes first; a lost one (already reported by its 'lost'
    // event) answers an unlock only when no live hold is left.
    const holds = this.unscoped;
    if (!holds) throw new LockNotHeldError(this.name, 'this handle holds it in no scope');
    const live = holds.findIndex((h) => h.live);
    const [hold] = holds.splice(live === -1 ? 0 : live, 1);
    if (holds.length === 0) this.unscoped = undefined;
    return hold;
  }

  async forceUnlock(): Promise<boolean> {
    this.port.assertOpen();
    return this.port.forceUnlock(this.keys, this.primitive);
  }

  async requestRelease(): Promise<number> {
    this.port.assertOpen();
    return this.port.requestRelease(this.keys, this.primitive);
  }

  async isLocked(): Promise<boolean> {
    this.port.assertOpen();
    return this.port.isLocked(this.keys);
  }

  async isHeldByCurrentScope(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  async getHoldCount(): Promise<number> {
    this.port.assertOpen();
    const owner = this.currentOwner();
    if (owner === undefined) return 0;
    return this.port.holdCount(this.keys, owner);
  }

  async remainTimeToLive(): Promise<number> {
    this.port.assertOpen();
    return this.port.pttl(this.keys);
  }

  async inspect(): Promise<LockInfo> {
    this.port.assertOpen();
    const state = await this.port.inspect(this.keys, this.primitive);
    return {
      name: this.name,
      locked: state.holders.length > 0,
      ttl: state.pttl,
      token: state.token,
      holders: state.holders.map(({ owner, count }) => ({ owner, ...ownerOrigin(owner), count })),
      // Known where waiters queue in Redis (one master or a Cluster); not in quorum mode.
      waiters: this.primitive.waits === 'queue' ? state.queued : null,
    };
  }

  async run<T>(fn: (context: HeldContext) => T | Promise<T>, options?: ScopedOptions): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError(`run(fn): fn must be a function, got ${describe(fn)}`);
    const o = resolveScopedArgs(options, 'run() options');
    this.port.assertOpen();
    const scope = this.reentrantScope() ?? newScope();
    return runInScope(scope, async () => {
      const hold = await this.port.acquire(this.primitive, this.keys, this.port.ownerOf(scope), o.leaseTime, o.waitTime, o.signal);
      if (!hold) throw new LockTimeoutError(this.name, o.waitTime ?? 0);
      let result: T;
      try {
        result = await fn({ signal: hold.signal, token: hold.token, name: this.name });
      } catch (error) {
        await this.port.release(hold).catch((releaseError: unknown) => {
          if (releaseError instanceof LockLostError && error instanceof Error && error.cause === undefined) error.cause = releaseError;
        });
        throw error;
      }
      await this.port.release(hold);
      return result;
    });
  }

  async acquire(options?: ScopedOptions): Promise<Held> {
    const o = resolveScopedArgs(options, 'acquire() options');
    this.port.assertOpen();
    // No fn to run in a child scope here: inside a scope the scope is the owner (as for
    // lock()); outside every scope the hold is its own owner, and held.run() enters it.
    const scope = currentScope() ?? newScope();
    const hold = await this.port.acquire(this.primitive, this.keys, this.port.ownerOf(scope), o.leaseTime, o.waitTime, o.signal);
    if (!hold) throw new LockTimeoutError(this.name, o.waitTime ?? 0);
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await this.port.release(hold);
    };
    return {
      name: this.name,
      token: hold.token,
      signal: hold.signal,
      release,
      run: async <T>(fn: () => T | Promise<T>) => {
        if (typeof fn !== 'function') throw new TypeError(`held.run(fn): fn must be a function, got ${describe(fn)}`);
        if (released || !hold.live) throw new LockNotHeldError(this.name, 'this hold was released or lost');
        return runInScope(scope, async () => fn());
      },
      [Symbol.asyncDispose]: release,
    };
  }

  on<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this {
    return listen(this, this.port, this.name, 'on', event, listener);
  }

  once<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this {
    return listen(this, this.port, this.name, 'once', event, listener);
  }

  off<E extends keyof LockEvents>(event: E, listener?: LockEvents[E]): this {
    return listen(this, this.port, this.name, 'off', event, listener);
  }

  /** Not async (one promise layer less on every lock()); throws only on a closed client. */
  protected take(leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined): Promise<Hold | null> {
    this.port.assertOpen();
    const scope = currentScope();
    if (scope) return this.port.acquire(this.primitive, this.keys, this.port.ownerOf(scope), leaseTime, waitTime, signal);
    return this.port.acquire(this.primitive, this.keys, this.port.unscopedOwner(), leaseTime, waitTime, signal).then((hold) => {
      if (hold) this.adopt(hold);
      return hold;
    });
  }

  /** The current scope when it already holds this lock (run then reenters). */
  protected reentrantScope(): Scope | undefined {
    const scope = currentScope();
    return scope && this.port.holdOf(this.keys, this.port.ownerOf(scope))?.joinable ? scope : undefined;
  }

  private currentOwner(): string | undefined {
    const scope = currentScope();
    if (scope) return this.port.ownerOf(scope);
    return this.unscoped?.find((h) => h.live)?.owner;
  }
}

/** A lock() resolves with nothing, whatever the hold. */
function settled(): void {}
