import { LockError } from '../errors/LockError.js';
import type { Granted, NextOwner, Refused } from '../store/types.js';
import { currentScope } from '../scope.js';
import { atDeadline, backoff } from './backoff.js';
import type { Hold } from './hold.js';
import type { AcquireRequest, WaitHost } from './request.js';
import { SelfDeadlockWatch } from './self-deadlock.js';
import { unavailable } from './unavailable.js';
import { WaitQueue, type Waiter } from './wait-queue.js';

const now = () => performance.now();

/** Resolves when p settles or after ms, whichever comes first. */
function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([p.then(() => undefined), bound]).finally(() => clearTimeout(timer));
}

/**
 * Local hand-offs in a row after which a release checks for waiters in other clients
 * and, if there are any, publishes instead: one process with many waiters may not keep
 * the lock to itself.
 */
const LOCAL_CHAIN = 4;

/**
 * How long a key's subscription outlives its last local waiter: a busy lock's next
 * waiter usually comes within it, and re-subscribing costs two round trips a wait.
 */
const LINGER = 200;

/** A waiter a last release is about to hand the lock to, in the same script call. */
export interface HandOffClaim {
  readonly waiter: Waiter;
  readonly next: NextOwner;
}

/**
 * Waits of the plain lock: per key, a FIFO of this client's waiters and one pump that
 * is subscribed to the lock's channel and retries for the head on a release message,
 * when the holder's TTL runs out, or after a backoff when an attempt failed. Releases
 * by local owners hand the lock to the head directly (see claimHandOff).
 */
export class LocalWaits {
  private readonly queues = new Map<string, WaitQueue>();
  /** Consecutive local hand-offs per key (see LOCAL_CHAIN). */
  private readonly chains = new Map<string, number>();
  /**
   * Per key: until when this client stays out of the way after a release that other
   * clients were waiting for, so that their retry wins over our own re-grab (no barging).
   */
  private readonly yields = new Map<string, number>();
  /** Waits made outside every scope, watched for the silent self-deadlock. */
  private readonly stalls: SelfDeadlockWatch;

  constructor(private readonly host: WaitHost) {
    this.stalls = new SelfDeadlockWatch((key, owner) => host.heldByOther(key, owner));
  }

  /**
   * No barging: with local waiters queued, the lock held by another local owner, or
   * inside the yield window, a caller that may wait joins the queue without an attempt.
   */
  shouldQueue(key: string, owner: string): boolean {
    const queue = this.queues.get(key);
    return (queue !== undefined && !queue.idle) || this.host.heldByOther(key, owner) || this.yielding(key);
  }

  /** Waits for the lock; `lastError` is the failure of an attempt made before queueing. */
  wait(request: AcquireRequest, lastError?: unknown): Promise<Hold | null> {
    const { keys, signal } = request;
    return new Promise<Hold | null>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      let queue = this.queues.get(keys.id);
      if (!queue) this.queues.set(keys.id, (queue = new WaitQueue(keys)));
      const q = queue;
      const onAbort = () => waiter.reject(signal?.reason);
      const finish = () => {
        waiter.settled = true;
        deadline.cancel();
        signal?.removeEventListener('abort', onAbort);
        q.remove(waiter);
        this.stalls.forget(waiter);
        q.wake();
      };
      const waiter: Waiter = {
        request,
        claimed: false,
        settled: false,
        failures: lastError === undefined ? 0 : 1,
        lastError,
        resolve: (hold) => {
          if (waiter.settled) return;
          finish();
          resolve(hold);
        },
        reject: (error) => {
          if (waiter.settled) return;
          finish();
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      q.add(waiter);
      // Still the caller's async context: outside every scope, a nested lock() could be
      // waiting for its own caller's hold.
      if (currentScope() === undefined) this.stalls.watch(waiter);
      // The wait ends with the last outcome: held by another owner (null), or the failure.
      const deadline = atDeadline(request.deadline, () =>
        waiter.lastError === undefined ? waiter.resolve(null) : waiter.reject(unavailable(keys.name, waiter.lastError)),
      );
      if (!q.pumping) void this.pump(q);
      else q.wake(); // a lingering pump picks it up at once
    });
  }

  /**
   * Before a last release by a local owner: the head waiter to hand the lock to in the
   * same call, if any, marked claimed until handedOff() or unclaim(). After LOCAL_CHAIN
   * local hand-offs in a row the script hands off only when no other client waits.
   */
  claimHandOff(key: string): HandOffClaim | undefined {
    const queue = this.queues.get(key);
    const waiter = queue?.next();
    if (!queue || !waiter) return undefined;
    waiter.claimed = true;
    const own = queue.pumping ? 1 : 0;
    const { owner, lease } = waiter.request;
    return { waiter, next: { owner, lease, unlessOthersWait: (this.chains.get(key) ?? 0) >= LOCAL_CHAIN ? own : undefined } };
  }

  /** The release handed the lock over: the waiter gets its hold (or gives it back if it left). */
  handedOff(key: string, claim: HandOffClaim, result: Granted): void {
    const { waiter } = claim;
    this.chains.set(key, (this.chains.get(key) ?? 0) + 1);
    waiter.claimed = false;
    if (waiter.settled) this.host.giveBack(waiter.request);
    else waiter.resolve(this.host.grant(waiter.request, result));
  }

  /** The release did not hand the lock over: the waiter may be tried again. */
  unclaim(key: string, claim: HandOffClaim): void {
    claim.waiter.claimed = false;
    this.queues.get(key)?.wake();
  }

  /** A last release deleted the key: other clients woken by it get a head start. */
  released(key: string, receivers: number): void {
    this.chains.delete(key);
    const own = this.queues.get(key)?.pumping ? 1 : 0;
    if (receivers > own) this.yields.set(key, now() + Math.min(10, Math.max(1, this.host.store.rtt * 3)));
  }

  /** Something changed for key (a release, a loss, a give-back): the pump looks again. */
  wake(key: string): void {
    this.stalls.changed(key);
    this.queues.get(key)?.wake();
  }

  /** Rejects every local wait (the client is closing). */
  rejectAll(error: Error): void {
    for (const queue of this.queues.values()) {
      for (const waiter of [...queue.waiters]) waiter.reject(error);
      queue.wake();
    }
  }

  /** Inside the window after a release that other clients were waiting for. */
  private yielding(key: string): boolean {
    const until = this.yields.get(key);
    if (until === undefined) return false;
    if (until > now()) return true;
    this.yields.delete(key);
    return false;
  }

  /** Waits for the lock on behalf of the queue's head until the queue is empty. */
  private async pump(queue: WaitQueue): Promise<void> {
    const { keys } = queue;
    const host = this.host;
    queue.pumping = true;
    let failure: unknown;
    try {
      // Subscribe before the retry, so a release between the two is not missed; but a
      // subscription that does not come (Redis unreachable) holds retries up for one
      // command bound at most (the subscriber keeps trying on its own).
      const subscribed = host.store.subscribe(keys.channel, () => {
        // Someone released: look again. The yield window is not cut short here: the
        // message may be our own release's, the very one we yield after.
        queue.wake();
      });
      await within(subscribed, host.timeoutFor(queue.waiters[0]?.request.lease ?? 0));
      while (!host.closed) {
        if (queue.idle) {
          await queue.sleep(LINGER);
          if (queue.idle) break;
          continue;
        }
        const head = queue.next();
        if (!head || host.heldByOther(keys.id, head.request.owner)) {
          // A hand-off is under way, or a local owner will hand the lock over: the
          // release, a loss or a leaving waiter wakes us.
          await queue.sleep(Infinity);
          continue;
        }
        if (this.yielding(keys.id)) {
          await queue.sleep(this.yields.get(keys.id)! - now());
          continue;
        }
        await this.attempt(queue, head);
      }
    } catch (error) {
      failure = error;
      host.error(error);
    } finally {
      queue.pumping = false;
      if (this.queues.get(keys.id) === queue) this.queues.delete(keys.id);
      if (!queue.idle) {
        const reason = host.closed ? new LockError('client closed') : new LockError(`waiting for '${keys.name}' failed`, { cause: failure, lockName: keys.name });
        for (const waiter of [...queue.waiters]) waiter.reject(reason);
      }
      await host.store.unsubscribe(keys.channel).catch(() => undefined);
    }
  }

  /** One attempt for the head, then the sleep its outcome calls for. */
  private async attempt(queue: WaitQueue, head: Waiter): Promise<void> {
    const { request } = head;
    head.claimed = true;
    let result: Granted | Refused;
    try {
      result = await request.primitive.attempt(this.host.store, request.keys, request.owner, request.lease, this.host.levelsOf(request.keys.id, request.owner), this.host.timeoutFor(request.lease), true);
    } catch (error) {
      head.claimed = false;
      if (head.settled) return;
      head.failures += 1;
      head.lastError = error;
      this.host.failed(request, error, head.failures);
      await queue.sleep(Math.min(backoff(head.failures), request.deadline - now()));
      return;
    }
    head.claimed = false;
    if (result.granted) {
      if (head.settled) this.host.giveBack(request);
      else head.resolve(this.host.grant(request, result));
      return;
    }
    if (head.settled) return;
    head.failures = 0;
    head.lastError = undefined;
    // pttl -1: held without expiry, only a release message wakes us; -2: just freed.
    const ttl = result.pttl === -1 ? Infinity : Math.max(0, result.pttl);
    await queue.sleep(Math.min(ttl, request.deadline - now()));
  }
}
