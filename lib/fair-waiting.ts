import { raceAbort } from './abort.js';
import type { AcquireResult, Backend, LockKeys } from './backend/types.js';
import { LockError } from './errors/LockError.js';
import { Bell } from './waiting.js';

/** What the fair wait needs from its client. */
export interface FairHost {
  readonly backend: Backend;
  readonly isClosed: boolean;
  /** Lease of a queue entry: a waiter that stops renewing it (a dead process) leaves the queue after this. */
  readonly heartbeat: number;
  timeoutFor(lease: number): number;
  /** Calls wake when a message names owner; resolves once subscribed; returns the unsubscribe. */
  watch(keys: LockKeys, owner: string, wake: () => void): Promise<() => void>;
  /** Gives back a grant nobody will use. */
  undo(keys: LockKeys, owner: string): void;
  reportError(error: unknown): void;
}

const now = () => performance.now();

/**
 * Waits for a fair lock: the owner joins the queue in Redis, and each retry doubles
 * as its heartbeat (at least every third of the heartbeat lease), so a live waiter is
 * never dropped and a dead one leaves within one heartbeat lease. Only the head is
 * woken by a release. A waiter that gives up leaves the queue at once.
 */
export async function waitFair(host: FairHost, keys: LockKeys, owner: string, lease: number, deadline: number, signal: AbortSignal | undefined): Promise<(AcquireResult & { granted: true }) | null> {
  const bell = new Bell();
  const ring = () => bell.wake();
  const attempt = () => {
    // A waiter holds no level yet (a reentry never waits).
    const call = host.backend.fairAcquire(keys, owner, lease, host.heartbeat, true, host.timeoutFor(lease), 0);
    return raceAbort(call, signal, (late) => late.granted && host.undo(keys, owner));
  };
  signal?.addEventListener('abort', ring);
  let unwatch: (() => void) | undefined;
  let granted = false;
  try {
    // Uncontended, the first attempt is the only round trip: no subscription needed.
    let result = await attempt();
    if (result.granted) {
      granted = true;
      return result;
    }
    // Subscribed before the retry: a release between the two is not missed.
    unwatch = await host.watch(keys, owner, ring);
    for (;;) {
      if (host.isClosed) throw new LockError('client closed');
      signal?.throwIfAborted();
      if (deadline - now() <= 0) return null;
      result = await attempt();
      if (result.granted) {
        granted = true;
        return result;
      }
      const ttl = result.pttl === -1 ? Infinity : Math.max(0, result.pttl);
      await bell.sleep(Math.min(host.heartbeat / 3, result.head ? ttl : Infinity, deadline - now()));
    }
  } finally {
    signal?.removeEventListener('abort', ring);
    unwatch?.();
    if (!granted) host.backend.fairLeave(keys, owner, host.timeoutFor(lease)).catch((e: unknown) => host.reportError(e));
  }
}
