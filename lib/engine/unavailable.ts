import { LockUnavailableError } from '../errors/LockUnavailableError.js';

/** The error a wait ends with when its last attempt failed: a QuorumError as it is, else wrapped. */
export function unavailable(name: string, cause: unknown): LockUnavailableError {
  if (cause instanceof LockUnavailableError) return cause;
  const why = cause instanceof Error ? cause.message : String(cause);
  return new LockUnavailableError(name, `cannot acquire '${name}': Redis could not be reached (${why})`, { cause });
}
