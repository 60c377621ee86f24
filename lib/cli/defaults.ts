// Defaults and bounds of holdfast's options, shared by the parser and the help.

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_GRACE_MS = 5_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** The variable redis-cli reads a password from; holdfast reads the same one. */
export const PASSWORD_ENV = 'REDISCLI_AUTH';
/**
 * The library's shortest lease (it rejects less with a RangeError) and its default key
 * prefix. Repeated here because the CLI reaches the library through its public index
 * only, which does not export them; checking the lease while parsing gives a usage
 * message instead of a stack, and `ls` needs the prefix to build its SCAN pattern.
 */
export const MIN_LEASE_MS = 100;
export const DEFAULT_PREFIX = 'holdfast:';
