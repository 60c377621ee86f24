import { CommandTimeoutError } from '../errors/CommandTimeoutError.js';
import { safety } from '../store/lease-margin.js';
import type { Granted } from '../store/types.js';
import type { AcquireRequest } from './request.js';

/**
 * A grant is a hold only while its lease runs: one read after its client-side deadline
 * (the reply held up on the way, or this process's event loop blocked while it came
 * in, so that the call's bound did not fire first) may have expired on the server and
 * gone to another owner, whose section would overlap the caller's. Such a grant is
 * given back by the caller, and the attempt fails as a call past its bound does: a wait
 * retries it, a single attempt reports the lock unavailable.
 * Returns that failure, or undefined when the grant is still good.
 */
export function lateGrant(request: AcquireRequest, granted: Granted): CommandTimeoutError | undefined {
  if (granted.validUntil > performance.now()) return undefined;
  return new CommandTimeoutError('acquire', request.lease - safety(request.lease), request.keys.name);
}
