import type { Refused } from '../store/types.js';

/**
 * How long a key's subscriptions outlive this client's last waiter on it: a busy lock's next waiter usually comes within it (a client
 * re-locking at once), and finds itself subscribed before its first attempt instead of
 * paying a subscribe and an unsubscribe round trip per wait. Only time ends it.
 */
export const SUBSCRIPTION_LINGER = 200;

/**
 * How long a wait pauses after its n-th failed attempt (Redis unreachable, a timeout,
 * no quorum): doubling from 25 ms, capped at 1 s, with full jitter on the upper half so
 * that many clients coming back from one outage do not retry in step. A release
 * message still wakes a pausing waiter at once.
 */
export function backoff(failures: number): number {
  const ceiling = Math.min(1_000, 25 * 2 ** Math.min(10, Math.max(0, failures - 1)));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * How long a refused wait sleeps unless a message wakes it. The head of a queue asks
 * when the holder's lease runs out (no release will come); every waiter in a queue asks
 * at least every third of its heartbeat lease, which keeps its place. A wait in its
 * client asks when the holder's lease runs out. pttl -1: held without expiry.
 * `heartbeat`: the queue entry's lease.
 */
export function refusedSleep(result: Refused, queued: boolean, heartbeat: number): number {
  const ttl = result.pttl === -1 ? Infinity : Math.max(0, result.pttl);
  if (!queued) return ttl;
  if (!result.head) return heartbeat / 3;
  return Math.min(ttl, heartbeat / 3);
}

/**
 * A timer for a monotonic deadline that never fires early: Node may run a timer a
 * fraction of a millisecond before performance.now() reaches its target (and truncates
 * fractional delays), so it re-arms until the deadline has really passed.
 */
export function atDeadline(deadline: number, fire: () => void): { cancel(): void } {
  // No deadline (lock(), a wait without waitTime): nothing to arm, nothing to allocate.
  if (deadline === Infinity) return NO_DEADLINE;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = deadline - performance.now();
    if (left <= 0) {
      timer = undefined;
      fire();
      return;
    }
    timer = setTimeout(arm, Math.ceil(left));
  };
  arm();
  return {
    cancel: () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

const NO_DEADLINE = { cancel: () => undefined };

/** Sleeps ms (never less), or rejects with the signal's reason when it aborts first. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    // Listening first: a pause of 0 ms fires inside atDeadline() and must find the
    // listener there to remove it.
    let timer: { cancel(): void } | undefined;
    const onAbort = () => {
      timer?.cancel();
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    timer = atDeadline(performance.now() + Math.max(0, ms), () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
