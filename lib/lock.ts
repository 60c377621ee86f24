import type { EventEmitter } from 'eventemitter3';
import type { LockKeys } from './backend/types.js';
import type { LockClient } from './client.js';
import { LockError } from './errors/LockError.js';
import { LockLostError } from './errors/LockLostError.js';
import { LockNotHeldError } from './errors/LockNotHeldError.js';
import type { LockEvents } from './events.js';
import type { Hold } from './hold.js';
import { describe, resolveLockArgs, resolveScopedArgs, resolveTryLockArgs, type LockOptions, type ScopedOptions, type TryLockOptions } from './options.js';
import { currentScope, newScope, runInScope, type Scope } from './scope.js';

/** What run(fn) passes to fn. */
export interface HeldContext {
  /** Aborts with a LockLostError when the lock is lost while fn runs. */
  readonly signal: AbortSignal;
  /** Fencing token of this hold: strictly increasing per name; pass it to the store you guard. */
  readonly token: number;
  readonly name: string;
}

/** What acquire() resolves to: release it, or let `await using` do it. */
export interface Held extends HeldContext, AsyncDisposable {
  /** Drops this acquisition (one level when it was a reentry). */
  release(): Promise<void>;
  /** Runs fn in the owner scope of this hold, so that lock()/run() inside reenter. */
  run<T>(fn: () => T | Promise<T>): Promise<T>;
}

/**
 * A handle on one named lock. Cheap: any number per name, all sharing the client's
 * state. Inside a scope (locks.scope, run) the scope is the owner and calls reenter;
 * outside every scope each acquisition is its own owner and unlock() releases the
 * one this handle took.
 */
export class Lock {
  readonly name: string;
  private readonly keys: LockKeys;
  /** Holds this handle took outside every scope, oldest first. */
  private readonly unscoped: Hold[] = [];

  /** @internal use LockClient.getLock or getFairLock */
  constructor(
    private readonly client: LockClient,
    name: string,
    /** Granted in request order across processes (getFairLock). */
    readonly fair: boolean,
  ) {
    this.name = name;
    this.keys = client.keysOf(name);
  }

  /** Waits until held. lock(lease) or lock({ leaseTime, signal }); without a lease the watchdog renews it. */
  async lock(leaseOrOptions?: number | LockOptions): Promise<void> {
    const o = resolveLockArgs(leaseOrOptions, arguments.length);
    this.client.assertOpen();
    const scope = currentScope();
    const hold = await this.client.acquire(this.keys, scope ? this.client.ownerOf(scope) : this.client.unscopedOwner(), o.leaseTime, undefined, o.signal, this.fair);
    if (hold && !scope) this.unscoped.push(hold);
  }

  /** One attempt, or waits up to waitTime: tryLock(), tryLock(wait), tryLock(wait, lease), tryLock({ ... }). */
  async tryLock(waitTimeOrOptions?: number | TryLockOptions, leaseTime?: number): Promise<boolean> {
    const o = resolveTryLockArgs(waitTimeOrOptions, leaseTime, arguments.length);
    return (await this.take(o.leaseTime, o.waitTime, o.signal)) !== null;
  }

  /** One level down; at zero the key is deleted (or handed to the next local waiter). */
  async unlock(): Promise<void> {
    this.client.assertOpen();
    const scope = currentScope();
    if (scope) {
      const hold = this.client.holdOf(this.keys.key, this.client.ownerOf(scope));
      if (!hold) throw new LockNotHeldError(this.name);
      return this.client.release(hold);
    }
    const hold = this.unscoped.shift();
    if (!hold) throw new LockNotHeldError(this.name, 'this handle holds it in no scope');
    return this.client.release(hold);
  }

  /** Deletes the lock whoever holds it (their holds are lost); true when there was one. */
  forceUnlock(): Promise<boolean> {
    return this.client.forceUnlock(this.keys);
  }

  async isLocked(): Promise<boolean> {
    this.client.assertOpen();
    return this.client.backend.isLocked(this.keys, this.client.timeoutFor(this.client.options.watchdogTimeout));
  }

  async isHeldByCurrentScope(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  /** Reentry count of the current scope (or of this handle's unscoped hold), 0 if none. */
  async getHoldCount(): Promise<number> {
    this.client.assertOpen();
    const owner = this.currentOwner();
    if (owner === undefined) return 0;
    return this.client.backend.holdCount(this.keys, owner, this.client.timeoutFor(this.client.options.watchdogTimeout));
  }

  /** Milliseconds left on the lock's lease; -2 when it is absent, -1 when it has no expiry. */
  async remainTimeToLive(): Promise<number> {
    this.client.assertOpen();
    return this.client.backend.pttl(this.keys, this.client.timeoutFor(this.client.options.watchdogTimeout));
  }

  /**
   * Runs fn holding the lock and releases it after. Reenters when the current scope
   * holds the lock, else runs fn in a new child scope (so sibling run() calls exclude
   * each other). Rejects with LockLostError when the lock was lost while fn ran.
   */
  async run<T>(fn: (context: HeldContext) => T | Promise<T>, options?: ScopedOptions): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError(`run(fn): fn must be a function, got ${describe(fn)}`);
    const o = resolveScopedArgs(options, 'run() options');
    this.client.assertOpen();
    const scope = this.reentrantScope() ?? newScope();
    return runInScope(scope, async () => {
      const hold = await this.client.acquire(this.keys, this.client.ownerOf(scope), o.leaseTime, o.waitTime, o.signal, this.fair);
      if (!hold) throw this.notAcquired(o.waitTime);
      let result: T;
      try {
        result = await fn({ signal: hold.signal, token: hold.token, name: this.name });
      } catch (error) {
        await this.client.release(hold).catch((releaseError: unknown) => {
          if (releaseError instanceof LockLostError && error instanceof Error && error.cause === undefined) error.cause = releaseError;
        });
        throw error;
      }
      await this.client.release(hold);
      return result;
    });
  }

  /**
   * Takes the lock and returns a Held to release, e.g. `await using held = await lock.acquire()`.
   * Inside a scope the scope owns it (nested acquisitions reenter); outside every scope
   * it is its own owner, and `held.run(fn)` runs fn as that owner.
   */
  async acquire(options?: ScopedOptions): Promise<Held> {
    const o = resolveScopedArgs(options, 'acquire() options');
    this.client.assertOpen();
    // No fn to run in a child scope here: inside a scope the scope is the owner (as for
    // lock()); outside every scope the hold is its own owner, and held.run() enters it.
    const scope = currentScope() ?? newScope();
    const hold = await this.client.acquire(this.keys, this.client.ownerOf(scope), o.leaseTime, o.waitTime, o.signal, this.fair);
    if (!hold) throw this.notAcquired(o.waitTime);
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await this.client.release(hold);
    };
    return {
      name: this.name,
      token: hold.token,
      signal: hold.signal,
      release,
      run: <T>(fn: () => T | Promise<T>) => runInScope(scope, async () => fn()),
      [Symbol.asyncDispose]: release,
    };
  }

  // ---- events for this name -----------------------------------------------------------

  on<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this {
    (this.client.events(this.name, true) as EventEmitter<LockEvents>).on(event, listener as never);
    return this;
  }

  once<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this {
    (this.client.events(this.name, true) as EventEmitter<LockEvents>).once(event, listener as never);
    return this;
  }

  off<E extends keyof LockEvents>(event: E, listener?: LockEvents[E]): this {
    this.client.events(this.name, false)?.off(event, listener as never);
    this.client.releaseEvents(this.name);
    return this;
  }

  // ---- helpers ------------------------------------------------------------------------

  private async take(leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined): Promise<Hold | null> {
    this.client.assertOpen();
    const scope = currentScope();
    const owner = scope ? this.client.ownerOf(scope) : this.client.unscopedOwner();
    const hold = await this.client.acquire(this.keys, owner, leaseTime, waitTime, signal, this.fair);
    if (hold && !scope) this.unscoped.push(hold);
    return hold;
  }

  /** The current scope when it already holds this lock (run/acquire then reenter). */
  private reentrantScope(): Scope | undefined {
    const scope = currentScope();
    return scope && this.client.holdOf(this.keys.key, this.client.ownerOf(scope))?.joinable ? scope : undefined;
  }

  private currentOwner(): string | undefined {
    const scope = currentScope();
    if (scope) return this.client.ownerOf(scope);
    return this.unscoped.find((h) => h.live)?.owner;
  }

  private notAcquired(waitTime: number | undefined): LockError {
    return new LockError(`could not acquire '${this.name}' within ${waitTime} ms`, { lockName: this.name });
  }
}
