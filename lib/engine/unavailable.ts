import { LockUnavailableError } from '../errors/LockUnavailableError.js';

/**
 * The error a call ends with when Redis could not be reached: a QuorumError as it is,
 * else wrapped. `doing` says what could not be done (`acquire 'a'`), so that a query
 * does not read as a failed acquisition.
 */
export function unavailable(name: string, cause: unknown, doing = `acquire '${name}'`): LockUnavailableError {
  if (cause instanceof LockUnavailableError) return cause;
  const why = cause instanceof Error ? cause.message : String(cause);
  return new LockUnavailableError(name, `cannot ${doing}: Redis could not be reached (${why})`, { cause });
}
