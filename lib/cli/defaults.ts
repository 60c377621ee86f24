// Defaults and bounds of `holdfast exec`'s options, shared by the parser and the help.

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_GRACE_MS = 5_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/**
 * The library's shortest lease (it rejects less with a RangeError). Repeated here
 * because the CLI reaches the library through its public index only, which does not
 * export it; checking it while parsing gives a usage message instead of a stack.
 */
export const MIN_LEASE_MS = 100;
