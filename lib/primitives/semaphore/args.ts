import { checkLease, checkSignal, checkWait, describe } from '../../options.js';

/** Largest limit: permit counts stay small integers in Redis and in Lua. */
const MAX_LIMIT = 2 ** 31 - 1;

/** getSemaphore's limit: an integer from 1 to 2^31-1. */
export function checkLimit(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`limit must be an integer, got ${describe(value)}`);
  if (value < 1) throw new RangeError(`limit must be at least 1, got ${value}`);
  if (value > MAX_LIMIT) throw new RangeError(`limit must be at most ${MAX_LIMIT}, got ${value}`);
  return value;
}

export interface ResolvedPermit {
  permits: number;
  waitTime: number | undefined;
  leaseTime: number | undefined;
  signal: AbortSignal | undefined;
}

const KEYS = ['permits', 'waitTime', 'leaseTime', 'signal'];

/** The options of acquire(), tryAcquire() and run(); `defaultWait` when waitTime is omitted. */
export function resolvePermitOptions(options: unknown, where: string, limit: number, defaultWait: number | undefined): ResolvedPermit {
  if (options === undefined) return { permits: 1, waitTime: defaultWait, leaseTime: undefined, signal: undefined };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError(`${where} must be an object, got ${describe(options)}`);
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KEYS.includes(key)) throw new TypeError(`${where}: unknown option '${key}' (expected ${KEYS.join(', ')})`);
  return {
    permits: o.permits === undefined ? 1 : checkPermits(o.permits, limit),
    waitTime: o.waitTime === undefined ? defaultWait : checkWait('waitTime', o.waitTime),
    leaseTime: o.leaseTime === undefined ? undefined : checkLease('leaseTime', o.leaseTime),
    signal: checkSignal('signal', o.signal),
  };
}

function checkPermits(value: unknown, limit: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`permits must be an integer, got ${describe(value)}`);
  if (value < 1) throw new RangeError(`permits must be at least 1, got ${value}`);
  if (value > limit) throw new RangeError(`permits must be at most the semaphore's limit (${limit}), got ${value}`);
  return value;
}
