/**
 * Bounded waiting: every wait has a deadline and a message saying what did
 * not happen, so a broken spec fails fast and legibly instead of hitting the
 * jest timeout. Timers come from node:timers, which jest fake timers leave
 * alone, so these helpers keep working in specs that fake the clock.
 */
import { clearTimeout, setTimeout } from 'node:timers';

const TIMED_OUT = Symbol('timed out');

/** Polls `fn` until it returns a truthy value; errors thrown by `fn` count as "not yet". */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  opts: { timeout?: number; interval?: number; message?: string } = {},
): Promise<T> {
  const { timeout = 5_000, interval = 50, message = 'condition not met' } = opts;
  let timer: NodeJS.Timeout | undefined;
  // Also bounds a single call of `fn` that never settles.
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timeout);
  });
  let last: string | undefined;
  try {
    for (;;) {
      const attempt = Promise.resolve()
        .then(fn)
        .then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
      const outcome = await Promise.race([attempt, expired]);
      if (outcome === TIMED_OUT) break;
      if ('error' in outcome) last = `last error: ${outcome.error instanceof Error ? outcome.error.message : String(outcome.error)}`;
      else if (outcome.value) return outcome.value;
      else last = `last value: ${String(outcome.value)}`;
      const next = await Promise.race([
        new Promise<void>((resolve) => setTimeout(resolve, interval)),
        expired,
      ]);
      if (next === TIMED_OUT) break;
    }
  } finally {
    clearTimeout(timer);
  }
  throw new Error(`waitFor: ${message} within ${timeout} ms${last ? ` (${last})` : ''}`);
}

type Listener = (...args: any[]) => void;

/** The first argument of the next `event`; rejects naming the event after `timeoutMs`. */
export function nextEvent<T = unknown>(
  emitter: { once(ev: string, fn: Listener): unknown; off?(ev: string, fn: Listener): unknown },
  event: string,
  timeoutMs: number,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const listener: Listener = (first: T) => {
      clearTimeout(timer);
      resolve(first);
    };
    const timer = setTimeout(() => {
      // Without removal the listener would outlive the spec and hold its scope.
      emitter.off?.(event, listener);
      reject(new Error(`nextEvent: no '${event}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    emitter.once(event, listener);
  });
}

/** `p`, or a rejection naming `what` if it has not settled within `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A warm-up call (the first command of a client with a short commandTimeout: it connects
 * and loads the scripts) made again until it succeeds, bounded: a loaded machine (the
 * full suite runs chaos workers beside the specs) may let the first one time out, which
 * is not what the spec tests.
 */
export function warmUp(call: () => Promise<unknown>, message = 'the warm-up call never succeeded'): Promise<unknown> {
  return waitFor(() => call().then(() => true), { timeout: 10_000, interval: 100, message });
}

/**
 * A timer due at `at` (a performance.now() time) that records whether it has run. When
 * the event loop runs late, due timers still run in the order of their due times, so an
 * event fired by a timer armed for an earlier deadline (the watchdog's) is heard before
 * `passed` turns true, whatever the lag; reading performance.now() when the event fires
 * would count the lag against the deadline.
 */
export function timerAt(at: number): { readonly passed: boolean; clear(): void } {
  let passed = false;
  const timer = setTimeout(() => (passed = true), Math.max(0, at - performance.now()));
  return {
    get passed() {
      return passed;
    },
    clear: () => clearTimeout(timer),
  };
}
