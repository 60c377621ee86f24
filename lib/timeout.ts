import { LockError } from './errors/LockError.js';

/** Thrown when one Redis call outlives its bound (a dead or stalled server). */
export class CommandTimeoutError extends LockError {
  constructor(what: string, ms: number) {
    super(`${what} got no reply within ${Math.ceil(ms)} ms`);
  }
}

/**
 * Bound a Redis call: ioredis queues commands while it reconnects, so without this a
 * dead server would stall lock(), unlock() and the watchdog's deadline indefinitely.
 * The call itself may still complete later; callers that must undo a late success
 * keep the original promise.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CommandTimeoutError(what, ms)), Math.max(1, ms));
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
