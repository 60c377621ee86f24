/**
 * Settles like `call`, but rejects with the signal's reason as soon as it aborts; a
 * value that still arrives after the abort goes to `late` (to give back a grant).
 */
export function raceAbort<T>(call: Promise<T>, signal: AbortSignal | undefined, late: (value: T) => void): Promise<T> {
  if (!signal) return call;
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      call.then(late, () => undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    call.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (!signal.aborted) resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        if (!signal.aborted) reject(error);
      },
    );
  });
}
