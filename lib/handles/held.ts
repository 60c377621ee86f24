// What a scoped acquisition hands its caller: run()'s context and acquire()'s Held.

/** What {@link Lock.run} passes to its function. */
export interface HeldContext {
  /**
   * Aborts, with a {@link LockLostError} as its `reason`, the moment the lock is lost
   * while held (the `lost` event fires at the same time). Pass it to long work so that
   * it stops writing.
   */
  readonly signal: AbortSignal;
  /**
   * Fencing token of this hold: strictly increasing per name. Pass it to the store you
   * guard and have it refuse writes carrying a lower token than one it has seen.
   */
  readonly token: number;
  /** The lock's name. */
  readonly name: string;
}

/**
 * What {@link Lock.acquire} resolves to: a hold to release, by hand or with
 * `await using`.
 *
 * @example
 * ```ts
 * await using held = await locks.getLock('account:1').acquire({ waitTime: 1_000 });
 * await ledger.write(entry, held.token); // released when the block ends, however it ends
 * ```
 */
export interface Held extends HeldContext, AsyncDisposable {
  /**
   * Drops this acquisition: one level when it was a reentry, else the lock itself.
   * Calling it again does nothing; `[Symbol.asyncDispose]` is the same function.
   *
   * @throws {@link LockLostError} when the hold was lost meanwhile (nothing is sent to Redis).
   * @throws {@link LockNotHeldError} when the scope's hold was already released another
   *   way (an `unlock()` in the same scope).
   * @throws {@link LockError} when the last level's release could not reach Redis: the
   *   lock then expires within its lease.
   * @example
   * ```ts
   * const held = await lock.acquire();
   * try { await work(held.signal); } finally { await held.release(); }
   * ```
   */
  release(): Promise<void>;
  /**
   * Runs `fn` in the owner scope of this hold, so that `lock()`, `run()` and `acquire()`
   * of the same lock inside `fn` reenter it instead of waiting for it. It does not
   * check that the hold is still held.
   *
   * @returns what `fn` returns (or resolves to); rejects with what `fn` throws.
   * @example
   * ```ts
   * const held = await lock.acquire(); // outside every scope: its own owner
   * await held.run(() => lock.run(async () => 'reentered'));
   * await held.release();
   * ```
   */
  run<T>(fn: () => T | Promise<T>): Promise<T>;
}
