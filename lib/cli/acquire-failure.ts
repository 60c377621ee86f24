// What a rejected acquire() means for holdfast: the one place that tells the kinds of
// failure apart, so that the library's error classes can change under it in one spot.
import { LockError, LockTimeoutError, QuorumError } from '../index.js';
import { EXIT_LOCK_BUSY, EXIT_UNAVAILABLE } from './exit-codes.js';
import { message } from './io.js';


/**
 * The exit status for an acquire() that rejected (other than by holdfast's own signal,
 * which exec handles): EXIT_LOCK_BUSY when the wait ran out, EXIT_UNAVAILABLE for
 * everything else (LockUnavailableError and its subclass QuorumError: Redis unreachable
 * or failing, no quorum).
 */
export function acquireFailureStatus(error: unknown): typeof EXIT_LOCK_BUSY | typeof EXIT_UNAVAILABLE {
  if (error instanceof LockTimeoutError) return EXIT_LOCK_BUSY;
  return EXIT_UNAVAILABLE;
}

/** The reason shown for an EXIT_UNAVAILABLE failure, with the Redis error behind it. */
export function describeUnavailable(error: unknown): string {
  if (error instanceof QuorumError) return error.message; // it lists every master's vote
  if (error instanceof LockError) {
    const cause = error.cause === undefined ? '' : ` (${message(error.cause)})`;
    return `${error.message}${cause}`;
  }
  return `Redis error: ${message(error)}`;
}
