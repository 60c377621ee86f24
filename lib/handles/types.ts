import type { LockEvents } from '../events.js';
import type { LockOptions, ScopedOptions, TryLockOptions } from '../options.js';
import type { Held, HeldContext } from './held.js';

export type { Held, HeldContext } from './held.js';

/** One owner holding a lock, as {@link Lock.inspect} shows it. */
export interface LockHolder {
  /** The owner id written in Redis: `host:pid:clientId:scope`. */
  readonly owner: string;
  /** Host of the owner's process, read from its id; null for an id of another form. */
  readonly host: string | null;
  /** Pid of the owner's process, read from its id; null for an id of another form. */
  readonly pid: number | null;
  /** Reentry levels the owner holds. */
  readonly count: number;
}

/** Who holds a lock and for how long: {@link Lock.inspect}, `holdfast status NAME --json`. */
export interface LockInfo {
  /** The lock's name. */
  readonly name: string;
  /** Some owner holds it. */
  readonly locked: boolean;
  /** As {@link Lock.remainTimeToLive}: ms left on the lease; -2 when absent, -1 with no expiry. */
  readonly ttl: number;
  /** The last fencing token minted for the name, or null when none is known. */
  readonly token: number | null;
  /**
   * The owners holding it: at most one for getLock and getFairLock. In quorum mode an
   * owner is listed when a majority of masters has it, with its smallest count.
   */
  readonly holders: readonly LockHolder[];
  /** How many owners are known to wait (a queue in Redis: one master or a Cluster), or null where that is not known (quorum mode). */
  readonly waiters: number | null;
}

/**
 * A handle on one named lock ({@link LockClient.getLock}, {@link LockClient.getFairLock}).
 * Cheap: any number per name, all sharing the client's state. Inside a scope
 * ({@link LockClient.scope}, {@link Lock.run}) the scope is the owner and calls
 * reenter; outside every scope each acquisition is its own owner and `unlock()`
 * releases the oldest one this handle took.
 *
 * Every method rejects with a {@link LockError} when the client is closed, and a
 * pending wait rejects with one when the client closes. Arguments are checked before
 * anything is sent: a `TypeError` or `RangeError` names the bad one.
 *
 * **Waiting.** A wait keeps its budget whatever Redis does: it settles within its
 * `waitTime` plus one command bound. Failed attempts are reported as `acquireFailed`
 * events and retried with backoff; at the end, a lock held by another owner means
 * `false` (tryLock) or {@link LockTimeoutError} (run, acquire), a failed last attempt
 * means {@link LockUnavailableError} ({@link QuorumError} in quorum mode). Aborting
 * the `signal` rejects with the signal's reason and leaves nothing behind in Redis.
 */
export interface Lock {
  /** The lock's name, as given to getLock or getFairLock. */
  readonly name: string;
  /**
   * Waits until the lock is held, with no time limit. Without a lease the watchdog
   * renews it until `unlock()`; with one it expires after it (`lost`, reason `expired`).
   *
   * @param leaseOrOptions a lease in ms (100 ms to 2^31-1), or `{ leaseTime, signal }`.
   * @throws `TypeError`/`RangeError` for a bad lease, signal or option name.
   * @throws {@link LockError} when the client is closed, or closes while waiting.
   * @throws the signal's `reason` when `signal` aborts the wait.
   * @example
   * ```ts
   * await lock.lock();
   * try { await work(); } finally { await lock.unlock(); }
   * ```
   */
  lock(leaseOrOptions?: number | LockOptions): Promise<void>;
  /**
   * One attempt, or a wait of up to `waitTime` ms: true when held, false when another
   * owner held it throughout. `tryLock()`, `tryLock(wait)`, `tryLock(wait, lease)`,
   * or `tryLock({ waitTime, leaseTime, signal })`.
   *
   * @param waitTimeOrOptions how long to wait in ms (default 0: one attempt), or the options.
   * @param leaseTime the lease in ms; omitted, the watchdog renews the lock.
   * @throws `TypeError`/`RangeError` for bad arguments.
   * @throws {@link LockUnavailableError} (a {@link QuorumError} in quorum mode) when the
   *   last attempt could not reach Redis or a majority of masters.
   * @throws {@link LockError} when the client is closed, or closes while waiting.
   * @throws the signal's `reason` when `signal` aborts the wait.
   * @example
   * ```ts
   * // Wait up to 2 s; hold for at most 60 s (no watchdog). Not a "once per round"
   * // guard: a host that comes after the unlock() takes the lock again.
   * if (await lock.tryLock(2_000, 60_000)) {
   *   try { await updateInventory(); } finally { await lock.unlock(); }
   * }
   * ```
   */
  tryLock(waitTimeOrOptions?: number | TryLockOptions, leaseTime?: number): Promise<boolean>;
  /**
   * Drops one level of the current owner's hold; at zero the key is deleted (or the
   * lock handed to the next local waiter in the same call) and waiters are woken.
   * A nested unlock whose Redis call fails still drops its level and resolves.
   *
   * @throws {@link LockNotHeldError} when the current scope (or, outside every scope,
   *   this handle) does not hold the lock, or its hold is already being released.
   * @throws {@link LockLostError} when the hold was lost (nothing is sent to Redis).
   * @throws {@link LockError} when the last level's release could not reach Redis (the
   *   lock expires within its lease), or the client is closed.
   * @example
   * ```ts
   * await lock.lock();
   * try { await work(); } finally { await lock.unlock(); }
   * ```
   */
  unlock(): Promise<void>;
  /**
   * Deletes the lock whoever holds it, and wakes its waiters; this client's holds of it
   * are lost (reason `deleted`). In quorum mode, on every master that answers.
   *
   * @returns true when the lock existed.
   * @throws {@link LockError} when the client is closed: thrown at the call, not as a rejection.
   * @throws {@link CommandTimeoutError} or the client library's error when Redis does not
   *   answer; {@link QuorumError} in quorum mode when no master does.
   * @example
   * ```ts
   * if (await lock.forceUnlock()) log.warn(`${lock.name} was force-released`);
   * ```
   */
  forceUnlock(): Promise<boolean>;
  /**
   * Asks every current holder of the lock to let go; deletes nothing. Each hold's signal
   * aborts with a {@link LockRevokedError} and its handle emits `revokeRequested`; the
   * holder unlocks when it is ready (a `run()` releases when its function settles).
   * Idempotent: a holder asked twice hears it once; one that already released is not
   * there. A holder running a holdfast version without this is not asked.
   *
   * @returns how many holds were asked (in quorum mode, distinct holds over the masters).
   * @throws {@link LockError} when the client is closed: thrown at the call, not as a rejection.
   * @throws {@link CommandTimeoutError} or the client library's error when Redis does not
   *   answer; {@link QuorumError} in quorum mode when no master does.
   * @example
   * ```ts
   * const asked = await lock.requestRelease();
   * console.log(`asked ${asked} holder(s) of ${lock.name} to let go`);
   * ```
   */
  requestRelease(): Promise<number>;
  /**
   * Whether any owner holds the lock (one read from Redis; a majority's answer in
   * quorum mode).
   *
   * @throws {@link LockError} when the client is closed.
   * @throws {@link CommandTimeoutError} or the client library's error when Redis does not
   *   answer; {@link QuorumError} in quorum mode when fewer than a majority answer.
   * @example
   * ```ts
   * if (await lock.isLocked()) console.log(`${lock.name} is busy`);
   * ```
   */
  isLocked(): Promise<boolean>;
  /**
   * Whether the current scope (or, outside every scope, this handle) holds the lock:
   * `getHoldCount() > 0`.
   *
   * @throws the same as {@link Lock.getHoldCount}.
   * @example
   * ```ts
   * await locks.scope(async () => {
   *   await lock.lock();
   *   console.log(await lock.isHeldByCurrentScope()); // true
   *   await lock.unlock();
   * });
   * ```
   */
  isHeldByCurrentScope(): Promise<boolean>;
  /**
   * Reentry count of the current scope (or of this handle's oldest live hold outside
   * every scope) as Redis has it; 0 if none.
   *
   * @throws {@link LockError} when the client is closed.
   * @throws {@link CommandTimeoutError} or the client library's error when Redis does not
   *   answer; {@link QuorumError} in quorum mode when fewer than a majority answer.
   * @example
   * ```ts
   * await lock.run(async () => {
   *   await lock.run(async () => console.log(await lock.getHoldCount())); // 2
   * });
   * ```
   */
  getHoldCount(): Promise<number>;
  /**
   * Milliseconds left on the lock's lease (Redis PTTL); -2 when it is absent, -1 when
   * it has no expiry.
   *
   * @throws {@link LockError} when the client is closed.
   * @throws {@link CommandTimeoutError} or the client library's error when Redis does not
   *   answer; {@link QuorumError} in quorum mode when fewer than a majority answer.
   * @example
   * ```ts
   * const ttl = await lock.remainTimeToLive();
   * if (ttl > 0) console.log(`${lock.name} expires in ${ttl} ms unless renewed`);
   * ```
   */
  remainTimeToLive(): Promise<number>;
  /**
   * Who holds the lock (owners with host and pid), its TTL, the last fencing token and
   * the known waiters, read in one call.
   *
   * @throws {@link LockError} when the client is closed.
   * @throws {@link CommandTimeoutError} or the client library's error when Redis does not
   *   answer; {@link QuorumError} in quorum mode when fewer than a majority answer.
   * @example
   * ```ts
   * const { locked, holders, ttl } = await lock.inspect();
   * if (locked) console.log(`held by pid ${holders[0].pid} on ${holders[0].host}, ${ttl} ms left`);
   * ```
   */
  inspect(): Promise<LockInfo>;
  /**
   * Runs `fn` holding the lock and releases it after, however `fn` ends. Reenters when
   * the current scope holds the lock, else runs `fn` in a new child scope (so sibling
   * `run()` calls exclude each other). Without `waitTime` it waits until held.
   *
   * @param fn gets the hold's `signal`, `token` and `name`.
   * @param options `{ waitTime, leaseTime, signal }`.
   * @returns what `fn` returns (or resolves to).
   * @throws what `fn` throws (a loss of the lock meanwhile is then its `cause`, if it had none).
   * @throws {@link LockLostError} when the lock was lost while `fn` ran and `fn` succeeded.
   * @throws {@link LockTimeoutError} when `waitTime` ran out while another owner held the lock.
   * @throws {@link LockUnavailableError} (a {@link QuorumError} in quorum mode) when the
   *   wait's last attempt could not reach Redis or a majority.
   * @throws {@link LockError} when the client is closed or closes while waiting, or when
   *   the final release could not reach Redis (the lock expires within its lease).
   * @throws `TypeError`/`RangeError` for a bad `fn` or options; the signal's `reason` on abort.
   * @example
   * ```ts
   * await locks.getLock('profile:7').run(async ({ signal, token }) => {
   *   const page = await render(signal); // stops if the lock is lost
   *   await store.write(page, token);    // the store refuses stale tokens
   * }, { waitTime: 5_000 });
   * ```
   */
  run<T>(fn: (context: HeldContext) => T | Promise<T>, options?: ScopedOptions): Promise<T>;
  /**
   * Takes the lock and returns a {@link Held} to release, e.g.
   * `await using held = await lock.acquire()`. Inside a scope the scope owns it
   * (nested acquisitions reenter); outside every scope it is its own owner, and
   * `held.run(fn)` runs `fn` as that owner. Without `waitTime` it waits until held.
   *
   * @param options `{ waitTime, leaseTime, signal }`.
   * @throws {@link LockTimeoutError} when `waitTime` ran out while another owner held the lock.
   * @throws {@link LockUnavailableError} (a {@link QuorumError} in quorum mode) when the
   *   wait's last attempt could not reach Redis or a majority.
   * @throws {@link LockError} when the client is closed, or closes while waiting.
   * @throws `TypeError`/`RangeError` for bad options; the signal's `reason` on abort.
   * @example
   * ```ts
   * await using held = await lock.acquire({ waitTime: 1_000, signal: AbortSignal.timeout(5_000) });
   * await ledger.write(entry, held.token);
   * ```
   */
  acquire(options?: ScopedOptions): Promise<Held>;
  /**
   * Listens to this lock's events (see {@link LockEvents}); the client's own `on`
   * hears every lock's. A throwing listener's error goes to the client's `error` event.
   *
   * @example
   * ```ts
   * lock.on('lost', ({ reason }) => log.error(`${lock.name} lost: ${reason}`));
   * ```
   */
  on<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this;
  /**
   * As {@link Lock.on}, for the next event only.
   *
   * @example
   * ```ts
   * lock.once('acquired', ({ waitedMs }) => console.log(`waited ${waitedMs} ms`));
   * ```
   */
  once<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this;
  /**
   * Removes a listener added with {@link Lock.on} or {@link Lock.once}; without one,
   * every listener of that event of this lock.
   *
   * @example
   * ```ts
   * const onLost = () => controller.abort();
   * lock.on('lost', onLost);
   * lock.off('lost', onLost);
   * ```
   */
  off<E extends keyof LockEvents>(event: E, listener?: LockEvents[E]): this;
}
