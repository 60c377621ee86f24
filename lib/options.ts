// Argument checks and defaults. Everything here throws before anything is sent to
// Redis, with a message that names the argument.

export const MIN_LEASE = 100;
/**
 * Longest lease or wait: Node's timers hold at most 2^31-1 ms (about 24.8 days; longer
 * ones fire at once), and a larger PEXPIRE would fail inside the script after it wrote.
 */
export const MAX_TIME = 2 ** 31 - 1;
/** Shortest keyRetention: the server's clock may step back by up to it (see _mint.lua). */
export const MIN_RETENTION = 1_000;
/** Default keyRetention: 24 h. */
export const DEFAULT_RETENTION = 86_400_000;

/**
 * Options of {@link LockClient}; every one is optional. Times are in milliseconds. An
 * unknown option is a `TypeError`, a value out of range a `RangeError`.
 *
 * @example
 * ```ts
 * const locks = new LockClient(redis, { watchdogTimeout: 10_000, keyPrefix: 'app:locks:' });
 * ```
 */
export interface ClientOptions {
  /**
   * Lease of a hold taken without one, renewed every third of it; also a fair waiter's
   * heartbeat lease, and (+25 %) how long a restarted master sits out in quorum mode.
   * 100 ms to 2^31-1. Default 30 000 ms.
   */
  watchdogTimeout?: number;
  /** Prefix of every key and channel holdfast writes; no `{` or `}`. Default `holdfast:`. */
  keyPrefix?: string;
  /** Quorum mode: clock drift allowance as a fraction of the lease, in [0, 0.5). Default 0.01. */
  driftFactor?: number;
  /**
   * Bound on one Redis call made by holdfast, at least 1 ms: a call with no reply by
   * then fails with a {@link CommandTimeoutError}. Default: a third of the lease
   * concerned, within 100..1000 ms.
   */
  commandTimeout?: number;
  /**
   * How long a lock name's keys outlive its last use, in ms (its fencing counter; the
   * lock and the fair queue live a lease or two heartbeats). Tokens keep increasing
   * across it (they follow the server's clock). At least 1 000. Default 86 400 000 (24 h).
   */
  keyRetention?: number;
  /**
   * Replica safety: every acquisition and every renewal is followed, in the same round
   * trip, by `WAIT min timeout`. When fewer than `min` replicas acknowledge within
   * `timeout` ms, an acquisition gives the lock back and counts as a failed attempt (a
   * wait retries it; `LockUnavailableError` at its end), a renewal counts as failed
   * (`renewalFailed`; `lost` at the deadline). With `min` the number of replicas, a lock
   * taken with it survives a Sentinel failover of its primary; with fewer, a failover
   * that promotes another replica, or replaces a primary that still serves, can lose it
   * (docs/safety.md). `min` 1 to 100, `timeout` 1 ms to 2^31-1 (never 0: WAIT
   * would block for good). Not with a Cluster. Default: none.
   */
  syncReplicas?: SyncReplicas;
}

/** See {@link ClientOptions.syncReplicas}. */
export interface SyncReplicas {
  /** Replicas that must acknowledge each acquisition and renewal. */
  min: number;
  /** How long to wait for them, in ms; it adds to the bound of each such call. */
  timeout: number;
}

export interface ResolvedOptions {
  watchdogTimeout: number;
  keyPrefix: string;
  driftFactor: number;
  commandTimeout: number | undefined;
  keyRetention: number;
  syncReplicas: Readonly<SyncReplicas> | undefined;
}

/**
 * Options of {@link Lock.lock}.
 *
 * @example
 * ```ts
 * await lock.lock({ leaseTime: 10_000, signal: AbortSignal.timeout(30_000) });
 * ```
 */
export interface LockOptions {
  /**
   * Lease in ms (100 ms to 2^31-1): the lock expires after it unless unlocked (`lost`,
   * reason `expired`), with no renewal. Omitted, the watchdog keeps the lock for as
   * long as it is held.
   */
  leaseTime?: number;
  /**
   * Aborting it rejects a pending wait with the signal's reason and leaves nothing
   * behind in Redis. It does not release a lock already held.
   */
  signal?: AbortSignal;
}

/**
 * Options of {@link Lock.tryLock}, and of run() and acquire() ({@link ScopedOptions}).
 *
 * @example
 * ```ts
 * const got = await lock.tryLock({ waitTime: 2_000, leaseTime: 60_000 });
 * ```
 */
export interface TryLockOptions extends LockOptions {
  /**
   * How long to wait for the lock, in ms, from 0 to 2^31-1; 0 makes one attempt.
   * Default 0 for tryLock; for run() and acquire(), omitted waits until held.
   */
  waitTime?: number;
}

/**
 * Options of {@link Lock.run} and {@link Lock.acquire}: `waitTime` omitted waits until
 * held (or aborted, or the client closes).
 *
 * @example
 * ```ts
 * await lock.run(work, { waitTime: 5_000, leaseTime: 60_000, signal });
 * ```
 */
export type ScopedOptions = TryLockOptions;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkKeys(where: string, value: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new TypeError(`${where}: unknown option '${key}' (expected ${allowed.join(', ')})`);
  }
}

export function checkLease(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${what} must be a finite number of milliseconds, got ${describe(value)}`);
  }
  if (value < MIN_LEASE) throw new RangeError(`${what} must be at least ${MIN_LEASE} ms, got ${value}`);
  if (value > MAX_TIME) throw new RangeError(`${what} must be at most ${MAX_TIME} ms (about 24.8 days), got ${value}`);
  return Math.floor(value);
}

export function checkWait(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${what} must be a finite number of milliseconds, got ${describe(value)}`);
  }
  if (value < 0) throw new RangeError(`${what} must be at least 0, got ${value}`);
  if (value > MAX_TIME) throw new RangeError(`${what} must be at most ${MAX_TIME} ms (about 24.8 days), got ${value}`);
  return Math.floor(value);
}

export function checkSignal(what: string, value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) throw new TypeError(`${what} must be an AbortSignal, got ${describe(value)}`);
  return value;
}

export function checkName(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`name must be a string, got ${describe(value)}`);
  if (value.length === 0) throw new RangeError('name must not be empty');
  if (value.length > 1024) throw new RangeError(`name must be at most 1024 characters, got ${value.length}`);
  return value;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}...` : value}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'undefined') return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? (value.constructor?.name ?? 'an object') : typeof value;
}

/**
 * The bound of one Redis call about a hold of `lease` ms: `commandTimeout` if set, else
 * a third of the lease within 100..1000 ms. A wait settles within its waitTime plus
 * this (DESIGN "Waiting"); with syncReplicas, plus the WAIT's own timeout.
 */
export function commandBound(lease: number, commandTimeout: number | undefined): number {
  return commandTimeout ?? Math.min(1_000, Math.max(100, Math.floor(lease / 3)));
}

export function resolveClientOptions(options: unknown): ResolvedOptions {
  if (options === undefined) options = {};
  if (!isObject(options)) throw new TypeError(`options must be an object, got ${describe(options)}`);
  checkKeys('options', options, ['watchdogTimeout', 'keyPrefix', 'driftFactor', 'commandTimeout', 'keyRetention', 'syncReplicas']);
  const watchdogTimeout = options.watchdogTimeout === undefined ? 30_000 : checkLease('options.watchdogTimeout', options.watchdogTimeout);
  let keyPrefix = 'holdfast:';
  if (options.keyPrefix !== undefined) {
    if (typeof options.keyPrefix !== 'string') throw new TypeError(`options.keyPrefix must be a string, got ${describe(options.keyPrefix)}`);
    if (/[{}]/.test(options.keyPrefix)) throw new RangeError('options.keyPrefix must not contain { or }: holdfast puts the lock name in the hash tag');
    keyPrefix = options.keyPrefix;
  }
  let driftFactor = 0.01;
  if (options.driftFactor !== undefined) {
    const d = options.driftFactor;
    if (typeof d !== 'number' || !Number.isFinite(d)) throw new TypeError(`options.driftFactor must be a finite number, got ${describe(d)}`);
    if (d < 0 || d >= 0.5) throw new RangeError(`options.driftFactor must be in [0, 0.5), got ${d}`);
    driftFactor = d;
  }
  let commandTimeout: number | undefined;
  if (options.commandTimeout !== undefined) {
    const t = options.commandTimeout;
    if (typeof t !== 'number' || !Number.isFinite(t)) throw new TypeError(`options.commandTimeout must be a finite number of milliseconds, got ${describe(t)}`);
    if (t < 1) throw new RangeError(`options.commandTimeout must be at least 1 ms, got ${t}`);
    commandTimeout = Math.floor(t);
  }
  let keyRetention = DEFAULT_RETENTION;
  if (options.keyRetention !== undefined) {
    const r = options.keyRetention;
    if (typeof r !== 'number' || !Number.isFinite(r)) throw new TypeError(`options.keyRetention must be a finite number of milliseconds, got ${describe(r)}`);
    if (r < MIN_RETENTION) throw new RangeError(`options.keyRetention must be at least ${MIN_RETENTION} ms, got ${r}`);
    if (r > MAX_TIME) throw new RangeError(`options.keyRetention must be at most ${MAX_TIME} ms (about 24.8 days), got ${r}`);
    keyRetention = Math.floor(r);
  }
  return { watchdogTimeout, keyPrefix, driftFactor, commandTimeout, keyRetention, syncReplicas: resolveSyncReplicas(options.syncReplicas) };
}

function resolveSyncReplicas(value: unknown): Readonly<SyncReplicas> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new TypeError(`options.syncReplicas must be an object { min, timeout }, got ${describe(value)}`);
  checkKeys('options.syncReplicas', value, ['min', 'timeout']);
  const { min, timeout } = value;
  if (typeof min !== 'number' || !Number.isInteger(min)) throw new TypeError(`options.syncReplicas.min must be an integer, got ${describe(min)}`);
  if (min < 1 || min > 100) throw new RangeError(`options.syncReplicas.min must be in 1..100, got ${min}`);
  if (typeof timeout !== 'number' || !Number.isFinite(timeout)) throw new TypeError(`options.syncReplicas.timeout must be a finite number of milliseconds, got ${describe(timeout)}`);
  // WAIT with 0 blocks until enough replicas answer, however long: never what a lock wants.
  if (timeout < 1) throw new RangeError(`options.syncReplicas.timeout must be at least 1 ms, got ${timeout}`);
  if (timeout > MAX_TIME) throw new RangeError(`options.syncReplicas.timeout must be at most ${MAX_TIME} ms (about 24.8 days), got ${timeout}`);
  return Object.freeze({ min, timeout: Math.floor(timeout) });
}

export interface ResolvedLock {
  leaseTime: number | undefined;
  waitTime: number | undefined;
  signal: AbortSignal | undefined;
}

/** lock(), lock(lease), lock({ leaseTime, signal }). */
export function resolveLockArgs(arg: unknown, extra: number): ResolvedLock {
  if (extra > 1) throw new TypeError(`lock() takes at most one argument, got ${extra}`);
  if (arg === undefined) return { leaseTime: undefined, waitTime: undefined, signal: undefined };
  if (typeof arg === 'number') return { leaseTime: checkLease('leaseTime', arg), waitTime: undefined, signal: undefined };
  if (!isObject(arg)) throw new TypeError(`lock() takes a lease in ms or { leaseTime, signal }, got ${describe(arg)}`);
  checkKeys('lock() options', arg, ['leaseTime', 'signal']);
  return {
    leaseTime: arg.leaseTime === undefined ? undefined : checkLease('leaseTime', arg.leaseTime),
    waitTime: undefined,
    signal: checkSignal('signal', arg.signal),
  };
}

/** tryLock(), tryLock(wait), tryLock(wait, lease), tryLock({ waitTime, leaseTime, signal }). */
export function resolveTryLockArgs(a: unknown, b: unknown, count: number): ResolvedLock {
  if (count > 2) throw new TypeError(`tryLock() takes at most two arguments, got ${count}`);
  if (a === undefined && b === undefined) return { leaseTime: undefined, waitTime: 0, signal: undefined };
  if (typeof a === 'number' || (a === undefined && b !== undefined)) {
    return {
      waitTime: a === undefined ? 0 : checkWait('waitTime', a),
      leaseTime: b === undefined ? undefined : checkLease('leaseTime', b),
      signal: undefined,
    };
  }
  if (!isObject(a)) throw new TypeError(`tryLock() takes (waitTime, leaseTime) or { waitTime, leaseTime, signal }, got ${describe(a)}`);
  if (b !== undefined) throw new TypeError('tryLock(options) takes no second argument');
  return resolveScoped(a, 'tryLock() options', 0);
}

/** run(fn, opts) and acquire(opts): waitTime omitted waits until held. */
export function resolveScopedArgs(opts: unknown, where: string): ResolvedLock {
  if (opts === undefined) return { leaseTime: undefined, waitTime: undefined, signal: undefined };
  if (!isObject(opts)) throw new TypeError(`${where} must be an object, got ${describe(opts)}`);
  return resolveScoped(opts, where, undefined);
}

function resolveScoped(opts: Record<string, unknown>, where: string, defaultWait: number | undefined): ResolvedLock {
  checkKeys(where, opts, ['waitTime', 'leaseTime', 'signal']);
  return {
    waitTime: opts.waitTime === undefined ? defaultWait : checkWait('waitTime', opts.waitTime),
    leaseTime: opts.leaseTime === undefined ? undefined : checkLease('leaseTime', opts.leaseTime),
    signal: checkSignal('signal', opts.signal),
  };
}
