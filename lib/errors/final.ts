/**
 * Errors no retry can change (a semaphore whose limit in Redis differs from the
 * caller's): a wait rejects with one at once instead of retrying it as a failed
 * attempt. Marked in a WeakSet, so the error's class and shape stay the caller's.
 */
const finals = new WeakSet<object>();

/** Marks `error` as final and returns it. */
export function final<E extends Error>(error: E): E {
  finals.add(error);
  return error;
}

export function isFinal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && finals.has(error);
}
