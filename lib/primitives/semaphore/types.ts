import type { LockEvents } from '../../events.js';

/**
 * Options of {@link Semaphore.acquire}, {@link Semaphore.tryAcquire} and
 * {@link Semaphore.run}.
 *
 * @example
 * ```ts
 * const sem = locks.getSemaphore('api:quota', 10);
 * const permit = await sem.acquire({ permits: 2, waitTime: 5_000, leaseTime: 60_000, signal });
 * ```
 */
export interface PermitOptions {
  /** How many permits to take at once: an integer from 1 to the semaphore's limit. Default 1. */
  permits?: number;
  /**
   * How long to wait, in ms, from 0 to 2^31-1; 0 makes one attempt. Default: wait
   * until granted for acquire() and run(), one attempt for tryAcquire().
   */
  waitTime?: number;
  /**
   * Lease in ms (100 ms to 2^31-1): the permits come back after it unless released
   * (`lost`, reason `expired`). Omitted, the watchdog keeps them while held.
   */
  leaseTime?: number;
  /** Aborting it rejects a pending wait with the signal's reason and leaves nothing behind in Redis. */
  signal?: AbortSignal;
}

/** What {@link Semaphore.run} passes to its function. */
export interface PermitContext {
  /**
   * Aborts, with a {@link LockLostError} as its `reason`, the moment the permits are
   * lost while held (the `lost` event fires at the same time).
   */
  readonly signal: AbortSignal;
  /** The permit's id in Redis (the owner id of the acquisition, `host:pid:clientId:~n`). */
  readonly id: string;
  /** How many permits this acquisition holds. */
  readonly permits: number;
  /** The semaphore's name. */
  readonly name: string;
}

/**
 * Permits held: what {@link Semaphore.acquire} resolves to. Release them by hand or
 * with `await using`.
 *
 * @example
 * ```ts
 * await using permit = await locks.getSemaphore('api:quota', 10).acquire({ permits: 2 });
 * await render(permit.signal); // released when the block ends, however it ends
 * ```
 */
export interface Permit extends PermitContext, AsyncDisposable {
  /**
   * Gives the permits back and wakes the waiters that fit now. Calling it again does
   * nothing; `[Symbol.asyncDispose]` is the same function.
   *
   * @throws {@link LockLostError} when the permits were lost meanwhile (nothing is sent to Redis).
   * @throws {@link LockUnavailableError} when the release could not reach Redis: the
   *   permits then come back at the end of their lease.
   */
  release(): Promise<void>;
}

/** One acquisition's permits, as {@link Semaphore.inspect} shows them. */
export interface PermitHolder {
  /** The permit's id in Redis (the owner id of the acquisition, `host:pid:clientId:~n`). */
  readonly id: string;
  /** Host of the holder's process, read from the id; null for an id of another form. */
  readonly host: string | null;
  /** Pid of the holder's process, read from the id; null for an id of another form. */
  readonly pid: number | null;
  /** How many permits this acquisition holds. */
  readonly permits: number;
  /** ms left of its lease. */
  readonly ttl: number;
}

/** Who holds a semaphore's permits: {@link Semaphore.inspect}, `holdfast status NAME --json` (its `semaphore`). */
export interface SemaphoreInfo {
  /** The semaphore's name. */
  readonly name: string;
  /** The limit Redis keeps for the name while anything is held or queued; null when none. */
  readonly limit: number | null;
  /** Permits held now (leases not run out): the sum of the holders' `permits`. */
  readonly used: number;
  /** Each acquisition holding permits, the soonest to expire first. */
  readonly holders: readonly PermitHolder[];
  /** How many acquisitions wait in the queue. */
  readonly waiters: number;
}

/**
 * A counting semaphore over one name (see {@link LockClient.getSemaphore}): at most
 * `limit` permits held at once, across every client. Each acquisition holds its
 * permits under a lease (renewed by the watchdog when no `leaseTime` is given), so a
 * crashed holder's permits come back within one lease. Waiters are served in arrival
 * order across clients: a waiter for many permits is not passed by later small
 * requests. Permits are not reentrant and carry no fencing token.
 *
 * Events: the {@link LockEvents} of this name, kind `semaphore`; `owner` is the permit's id.
 */
export interface Semaphore {
  /** The semaphore's name. */
  readonly name: string;
  /** The most permits held at once (every client of the name must give the same). */
  readonly limit: number;
  /**
   * Waits for permits (default 1) and resolves with them.
   *
   * @throws {@link LockTimeoutError} when `waitTime` ran out while the permits were taken.
   * @throws {@link LockUnavailableError} when the wait's last attempt could not reach Redis.
   * @throws {@link LockError} when Redis keeps another limit for the name, or the client is closed.
   * @throws `TypeError`/`RangeError` for bad options (before anything is sent).
   * @example
   * ```ts
   * const permit = await locks.getSemaphore('api:quota', 10).acquire({ permits: 2, waitTime: 5_000 });
   * try { await work(permit.signal); } finally { await permit.release(); }
   * ```
   */
  acquire(options?: PermitOptions): Promise<Permit>;
  /**
   * One attempt (or a wait of `waitTime`): the permits, or null when they were not free.
   *
   * @throws as {@link Semaphore.acquire}, but a wait that runs out resolves with null.
   * @example
   * ```ts
   * const permit = await locks.getSemaphore('api:quota', 10).tryAcquire({ permits: 1, leaseTime: 30_000 });
   * if (!permit) return 'busy';
   * ```
   */
  tryAcquire(options?: PermitOptions): Promise<Permit | null>;
  /**
   * Takes permits, runs `fn`, gives them back however `fn` ends. When the permits were
   * lost while `fn` ran, it rejects with {@link LockLostError} after `fn` settles,
   * unless `fn` threw (then `fn`'s error wins).
   *
   * @returns what `fn` returns (or resolves to).
   * @throws as {@link Semaphore.acquire}.
   * @example
   * ```ts
   * await locks.getSemaphore('api:quota', 10).run(({ signal }) => render(signal), { permits: 1, waitTime: 10_000 });
   * ```
   */
  run<T>(fn: (context: PermitContext) => T | Promise<T>, options?: PermitOptions): Promise<T>;
  /**
   * Permits not held now (the limit less the permits held under a live lease). Waiters
   * queued ahead of a new request may take them first.
   *
   * @throws {@link LockError} when Redis keeps another limit for the name; {@link LockUnavailableError} when Redis could not be reached.
   */
  availablePermits(): Promise<number>;
  /**
   * Asks every holder of permits of the name to let go (as {@link Lock.requestRelease}):
   * each acquisition's signal aborts with a {@link LockRevokedError} and its handles emit
   * `revokeRequested`; each holder releases when it is ready. Nothing is deleted. A holder
   * whose client is unreachable, or runs a holdfast version without this, is not asked.
   *
   * @returns how many acquisitions were asked (0 when no permit is held).
   * @throws {@link LockUnavailableError} when Redis could not be reached.
   * @example
   * ```ts
   * console.log(`asked ${await locks.getSemaphore('api:quota', 10).requestRelease()} holders to let go`);
   * ```
   */
  requestRelease(): Promise<number>;
  /**
   * Deletes every permit of the name, whoever holds it (the semaphore's
   * {@link Lock.forceUnlock}; `holdfast release NAME --force`). A reachable holder hears it
   * at once: its permits are `lost` (reason `deleted`) and their signal aborts. Waiters
   * ask again, in arrival order. For permits left by a stuck holder; a crashed holder's
   * come back by themselves within one lease.
   *
   * @returns true when permits were held.
   * @throws {@link LockUnavailableError} when Redis could not be reached.
   * @example
   * ```ts
   * if (await locks.getSemaphore('api:quota', 10).forceRelease()) console.warn('api:quota permits force-released');
   * ```
   */
  forceRelease(): Promise<boolean>;
  /**
   * Who holds permits now (leases not run out), and how many wait. Reads what Redis
   * keeps, whatever this handle's limit: `limit` is Redis's (null when nothing is held
   * or queued), and no limit is checked.
   *
   * @throws {@link LockUnavailableError} when Redis could not be reached.
   * @example
   * ```ts
   * const { used, limit, holders } = await locks.getSemaphore('api:quota', 10).inspect();
   * console.log(`${used}/${limit}`, holders.map((h) => `${h.host} pid ${h.pid}`));
   * ```
   */
  inspect(): Promise<SemaphoreInfo>;
  /** Listens to this name's events (kind `semaphore`). */
  on<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this;
  /** As {@link Semaphore.on}, for the next event only. */
  once<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this;
  /** Removes a listener added with on/once (all of the event's, without `listener`). */
  off<E extends keyof LockEvents>(event: E, listener?: LockEvents[E]): this;
}
