// The public face of getMultiLock: the Lock API over several names.
import type { LockOptions, ScopedOptions, TryLockOptions } from '../../options.js';
import type { LockInfo } from '../../handles/types.js';

/** What {@link MultiLock.run} passes to its function. */
export interface MultiHeldContext {
  /**
   * Aborts, with that name's {@link LockLostError} as its `reason`, the moment any of
   * the names is lost while held (its `lost` event fires at the same time).
   */
  readonly signal: AbortSignal;
  /** Fencing token of each name's hold, by name: `{ 'account:1': 17, 'account:2': 9 }`. */
  readonly tokens: Readonly<Record<string, number>>;
  /** The names, in the order given to getMultiLock. */
  readonly names: readonly string[];
}

/**
 * What {@link MultiLock.acquire} resolves to: every name held, to release together,
 * by hand or with `await using`.
 *
 * @example
 * ```ts
 * await using held = await locks.getMultiLock(['account:1', 'account:2']).acquire({ waitTime: 1_000 });
 * await ledger.write(entry, held.tokens['account:1']);
 * ```
 */
export interface MultiHeld extends MultiHeldContext, AsyncDisposable {
  /**
   * Drops this acquisition on every name (one level where it was a reentry), in the
   * reverse of the order they were taken in; every name is tried even when one fails.
   * Calling it again does nothing; `[Symbol.asyncDispose]` is the same function.
   *
   * @throws {@link LockLostError} when a name was lost meanwhile (the others are released).
   * @throws {@link LockNotHeldError} when a name was already released another way.
   * @throws {@link LockError} when a release could not reach Redis: that name then
   *   expires within its lease.
   * @example
   * ```ts
   * const held = await locks.getMultiLock(['account:1', 'account:2']).acquire();
   * try { await work(held.signal); } finally { await held.release(); }
   * ```
   */
  release(): Promise<void>;
  /**
   * Runs `fn` in the owner scope of this hold, so that the multi-lock (or getLock() of
   * one of its names) inside `fn` reenters instead of waiting.
   *
   * @returns what `fn` returns (or resolves to); rejects with what `fn` throws.
   * @throws `TypeError` when `fn` is not a function.
   * @throws {@link LockNotHeldError} when this hold was released, or a name was lost.
   * @example
   * ```ts
   * const held = await locks.getMultiLock(['account:1', 'account:2']).acquire(); // its own owner
   * await held.run(() => locks.getLock('account:1').run(async () => 'reentered'));
   * await held.release();
   * ```
   */
  run<T>(fn: () => T | Promise<T>): Promise<T>;
}

/**
 * A handle on several locks taken together, all or nothing ({@link LockClient.getMultiLock}).
 * Each name is a reentrant lock of its own (the same key as `getLock(name)`, so the two
 * exclude each other and reenter each other in one scope); the multi-lock takes them in
 * one global order (sorted by name) whatever order they were given in, so two
 * multi-locks over overlapping names never deadlock. A name taken first stays held
 * while a later one is awaited, and every failure (timeout, abort, unreachable Redis,
 * close) gives back what was taken before the call settles.
 *
 * A `leaseTime` starts when the last name is held: the names taken before it are kept
 * under the watchdog while it is awaited, then every name is re-leased to `leaseTime`.
 * A name lost while a later one is awaited (e.g. force-unlocked) is given back and taken
 * again within the same wait budget.
 *
 * Owners, waiting and errors are the {@link Lock}'s: a wait keeps one budget for all
 * the names and settles within `waitTime` plus one command bound, as a Lock's wait
 * (its attempts and the re-lease to a `leaseTime` share that bound), and one more when
 * it ends without every name: giving back what it took, every name at once. Events stay per name
 * (`kind: 'multi'`): listen on the client or on `getLock(name)`. In quorum mode each
 * name is a quorum lock (a majority per name).
 */
export interface MultiLock {
  /** The names, in the order given to getMultiLock. */
  readonly names: readonly string[];
  /**
   * Waits until every name is held, with no time limit.
   *
   * @param leaseOrOptions a lease in ms for every name, or `{ leaseTime, signal }`.
   * @throws `TypeError`/`RangeError` for a bad lease, signal or option name.
   * @throws {@link LockError} when the client is closed, or closes while waiting.
   * @throws the signal's `reason` when `signal` aborts the wait (nothing stays held).
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * await both.lock();
   * try { await work(); } finally { await both.unlock(); }
   * ```
   */
  lock(leaseOrOptions?: number | LockOptions): Promise<void>;
  /**
   * One attempt per name, or a wait of up to `waitTime` ms for all of them: true when
   * every name is held, false (and none held) when another owner held one throughout.
   *
   * @param waitTimeOrOptions the wait budget in ms for all names (default 0), or the options.
   * @param leaseTime the lease in ms, from when every name is held; omitted, the watchdog renews every name.
   * @throws `TypeError`/`RangeError` for bad arguments.
   * @throws {@link LockUnavailableError} (a {@link QuorumError} in quorum mode) when the
   *   last attempt on a name could not reach Redis.
   * @throws {@link LockError} when the client is closed, or closes while waiting.
   * @throws the signal's `reason` when `signal` aborts the wait.
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * if (await both.tryLock(2_000)) {
   *   try { await work(); } finally { await both.unlock(); }
   * }
   * ```
   */
  tryLock(waitTimeOrOptions?: number | TryLockOptions, leaseTime?: number): Promise<boolean>;
  /**
   * Drops one level of the current owner's hold of every name, in reverse order.
   *
   * @throws {@link LockNotHeldError} when the current scope (or, outside every scope,
   *   this handle) does not hold every name; nothing is released then.
   * @throws {@link LockLostError} when a name was lost (the others are released).
   * @throws {@link LockError} when a release could not reach Redis (that name expires
   *   within its lease), or the client is closed.
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * await both.lock();
   * try { await work(); } finally { await both.unlock(); }
   * ```
   */
  unlock(): Promise<void>;
  /**
   * Deletes every name whoever holds it (as {@link Lock.forceUnlock} on each).
   *
   * @returns true when at least one of them existed.
   * @throws {@link LockError} when the client is closed.
   * @throws {@link LockUnavailableError} when Redis does not answer for a name (the
   *   others are still tried).
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * if (await both.forceUnlock()) log.warn(`${both.names.join(', ')} force-released`);
   * ```
   */
  forceUnlock(): Promise<boolean>;
  /**
   * Asks the holders of every name to let go (as {@link Lock.requestRelease} on each);
   * deletes nothing. A multi-lock's hold is asked once per name it holds.
   *
   * @returns how many holds were asked, summed over the names.
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * console.log(`asked ${await both.requestRelease()} holds to let go`);
   * ```
   */
  requestRelease(): Promise<number>;
  /**
   * Whether every name is held, by any owners.
   *
   * @throws {@link LockError} when the client is closed.
   * @throws {@link LockUnavailableError} when Redis does not answer.
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * if (await both.isLocked()) console.log('both accounts are busy');
   * ```
   */
  isLocked(): Promise<boolean>;
  /**
   * Whether the current scope (or, outside every scope, this handle) holds every name.
   *
   * @throws the same as {@link MultiLock.getHoldCount}.
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * await both.run(async () => console.log(await both.isHeldByCurrentScope())); // true
   * ```
   */
  isHeldByCurrentScope(): Promise<boolean>;
  /**
   * Reentry count of the current scope (or of this handle's oldest live hold outside
   * every scope) on the name it holds least, as Redis has it; 0 if it misses one.
   *
   * @throws {@link LockError} when the client is closed.
   * @throws {@link LockUnavailableError} when Redis does not answer.
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * await both.run(() => both.run(async () => console.log(await both.getHoldCount()))); // 2
   * ```
   */
  getHoldCount(): Promise<number>;
  /**
   * Milliseconds until the first of the names expires unless renewed; -2 when one of
   * them is absent, -1 when none has an expiry.
   *
   * @throws {@link LockError} when the client is closed.
   * @throws {@link LockUnavailableError} when Redis does not answer.
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * console.log(`${await both.remainTimeToLive()} ms left`);
   * ```
   */
  remainTimeToLive(): Promise<number>;
  /**
   * {@link Lock.inspect} of every name, in the order given to getMultiLock.
   *
   * @throws {@link LockError} when the client is closed.
   * @throws {@link LockUnavailableError} when Redis does not answer.
   * @example
   * ```ts
   * const both = locks.getMultiLock(['account:1', 'account:2']);
   * for (const { name, holders } of await both.inspect()) console.log(name, holders.map((h) => h.pid));
   * ```
   */
  inspect(): Promise<readonly LockInfo[]>;
  /**
   * Runs `fn` holding every name and releases them after, however `fn` ends. Reenters
   * when the current scope holds one of the names, else runs `fn` in a new child scope.
   * Without `waitTime` it waits until all are held.
   *
   * @param fn gets the `signal` (aborts when any name is lost), the `tokens` by name and the `names`.
   * @param options `{ waitTime, leaseTime, signal }`: one wait budget for all names.
   * @returns what `fn` returns (or resolves to).
   * @throws what `fn` throws (a loss of a name meanwhile is then its `cause`, if it had none).
   * @throws {@link LockLostError} when a name was lost while `fn` ran and `fn` succeeded.
   * @throws {@link LockTimeoutError} when `waitTime` ran out while another owner held a name.
   * @throws {@link LockUnavailableError} (a {@link QuorumError} in quorum mode) when the
   *   last attempt on a name could not reach Redis.
   * @throws {@link LockError} when the client is closed or closes while waiting.
   * @throws `TypeError`/`RangeError` for a bad `fn` or options; the signal's `reason` on abort.
   * @example
   * ```ts
   * await locks.getMultiLock(['account:1', 'account:2']).run(async ({ signal, tokens }) => {
   *   await work(signal);
   *   await ledger.write(entry, tokens['account:2']);
   * }, { waitTime: 5_000 });
   * ```
   */
  run<T>(fn: (context: MultiHeldContext) => T | Promise<T>, options?: ScopedOptions): Promise<T>;
  /**
   * Takes every name and returns a {@link MultiHeld} to release, e.g.
   * `await using held = await both.acquire()`. Owners as for {@link Lock.acquire}.
   *
   * @param options `{ waitTime, leaseTime, signal }`: one wait budget for all names.
   * @throws {@link LockTimeoutError} when `waitTime` ran out while another owner held a name.
   * @throws {@link LockUnavailableError} (a {@link QuorumError} in quorum mode) when the
   *   last attempt on a name could not reach Redis.
   * @throws {@link LockError} when the client is closed, or closes while waiting.
   * @throws `TypeError`/`RangeError` for bad options; the signal's `reason` on abort.
   * @example
   * ```ts
   * await using held = await locks.getMultiLock(['account:1', 'account:2']).acquire({ waitTime: 1_000 });
   * console.log(held.tokens['account:1']);
   * ```
   */
  acquire(options?: ScopedOptions): Promise<MultiHeld>;
}
