import { LockError } from '../errors/LockError.js';
import type { Granted, LockKeys, NextOwner, Refused } from '../store/types.js';
import { currentScope } from '../scope.js';
import { Background } from '../util/background.js';
import { atDeadline, backoff, retryIn, within } from './backoff.js';
import type { Hold } from './hold.js';
import type { AcquireRequest, WaitHost } from './request.js';
import { SelfDeadlockWatch } from './self-deadlock.js';
import { unavailable } from './unavailable.js';
import { WaitQueue, type Waiter } from './wait-queue.js';

const now = () => performance.now();

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
 *
 * Between clients, where the store keeps a waiting list (one master or a Cluster), the
 * pump's refused attempts put this client on the lock's list and a release wakes only
 * the client whose turn it is (the message names it): no herd of retries, and turns in
 * order (scripts/_waiting.lua). Without a list (quorum mode) every release wakes every
 * waiting client.
 */
export class LocalWaits {
  /** Waiting-list leaves in flight (see leaveAll()). */
  private readonly leaving = new Background();
  private readonly queues = new Map<string, WaitQueue>();
  /**
   * Keys whose last release woke nobody (a waiting client's turn is still to come), until
   * this client either takes the lock again (acquiring) or, in the next turn of the event
   * loop, wakes that client: the free lock never idles while it sleeps until its turn.
   */
  private readonly unwoken = new Map<string, LockKeys>();
  private wakeScheduled = false;
  /** Waits made outside every scope, watched for the silent self-deadlock. */
  private readonly stalls: SelfDeadlockWatch;

  constructor(private readonly host: WaitHost) {
    this.stalls = new SelfDeadlockWatch((key, owner) => host.heldByOther(key, owner));
  }

  /**
   * No barging within the client: with local waiters queued or the lock held by another
   * local owner, a caller that may wait joins the queue without an attempt. (Between
   * clients the waiting list's turns decide, in Redis.)
   */
  shouldQueue(key: string, owner: string): boolean {
    const queue = this.queues.get(key);
    return (queue !== undefined && !queue.idle) || this.host.heldByOther(key, owner);
  }

  /** This client goes for the lock at key: a deferred wake-up of another client is not needed. */
  acquiring(key: string): void {
    if (this.unwoken.size > 0) this.unwoken.delete(key);
  }

  /** A release woke nobody: unless this client takes the lock again at once, it wakes the waiting list's head. */
  deferred(keys: LockKeys): void {
    const list = this.host.store.waitingList;
    if (!list) return;
    this.unwoken.set(keys.id, keys);
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    // After the caller's continuation (a lock() right after unlock() sends its attempt
    // within the same microtask queue).
    setImmediate(() => {
      this.wakeScheduled = false;
      for (const k of this.unwoken.values()) list.wake(k, this.host.timeoutFor(list.entryLease)).catch((error: unknown) => this.host.closed || this.host.error(error));
      this.unwoken.clear();
    });
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
      // Set below; a deadline already past (an attempt before queueing outlasted the
      // whole wait) fires inside atDeadline(), before it is assigned.
      let deadline: { cancel(): void } | undefined;
      const finish = () => {
        waiter.settled = true;
        deadline?.cancel();
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
      deadline = atDeadline(request.deadline, () =>
        waiter.lastError === undefined ? waiter.resolve(null) : waiter.reject(unavailable(keys.name, waiter.lastError)),
      );
      if (waiter.settled) return;
      if (!q.pumping) void this.pump(q);
      else q.wake(); // a lingering pump picks it up at once
    });
  }

  /**
   * Before a last release by a local owner: the head waiter to hand the lock to in the
   * same call, if any, marked claimed until handedOff() or unclaim(). The script hands
   * off only while no other client's turn has come (scripts/_waiting.lua).
   */
  claimHandOff(key: string): HandOffClaim | undefined {
    const waiter = this.queues.get(key)?.next();
    if (!waiter) return undefined;
    waiter.claimed = true;
    const { owner, lease } = waiter.request;
    return { waiter, next: { owner, lease } };
  }

  /** The release handed the lock over: the waiter gets its hold (or gives it back if it left). */
  handedOff(key: string, claim: HandOffClaim, result: Granted): void {
    const { waiter } = claim;
    // The script took this client off the waiting list: it is served.
    const queue = this.queues.get(key);
    if (queue) queue.listed = false;
    waiter.claimed = false;
    if (waiter.settled) return this.host.giveBack(waiter.request);
    try {
      waiter.resolve(this.host.grant(waiter.request, result));
    } catch (error) {
      // Read after its lease ran out (given back): the waiter tries again at once.
      this.failedAttempt(waiter, error);
      queue?.wake();
    }
  }

  /** The release did not hand the lock over: the waiter may be tried again. */
  unclaim(key: string, claim: HandOffClaim): void {
    claim.waiter.claimed = false;
    this.queues.get(key)?.wake();
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

  /**
   * The client is closing: takes it off every waiting list it is on, resolving once
   * those calls have settled (each bounded), so that a closed client leaves no entry
   * behind to head a list (a dead head's turn keeps the free lock from everyone for up
   * to an entry lease).
   */
  leaveAll(): Promise<void> {
    for (const queue of this.queues.values()) this.leaveList(queue);
    return this.leaving.settled();
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
      const me = host.store.waitingList?.id;
      const subscribed = host.store.subscribe(keys.channel, (message) => {
        // Someone released to every waiter, or names this client: look again.
        if (message === 'released' || message === me) queue.wake();
      });
      await within(subscribed, host.timeoutFor(queue.waiters[0]?.request.lease ?? 0));
      while (!host.closed) {
        if (queue.idle) {
          this.leaveList(queue);
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
        await this.attempt(queue, head);
      }
    } catch (error) {
      failure = error;
      host.error(error);
    } finally {
      queue.pumping = false;
      this.leaveList(queue);
      if (this.queues.get(keys.id) === queue) this.queues.delete(keys.id);
      if (!queue.idle) {
        // Closing: rejected once this client has left the waiting lists (Engine.close).
        if (host.closed) await this.leaving.settled();
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
      this.failedAttempt(head, error);
      await queue.sleep(Math.min(backoff(head.failures), request.deadline - now()));
      return;
    }
    head.claimed = false;
    const list = this.host.store.waitingList;
    // A grant took this client off the list; a refusal put it on (or kept its place).
    queue.listed = list !== undefined && !result.granted;
    if (result.granted) {
      if (head.settled) return this.host.giveBack(request);
      try {
        head.resolve(this.host.grant(request, result));
      } catch (error) {
        // Read after its lease ran out (given back): a failed attempt like any other.
        this.failedAttempt(head, error);
        await queue.sleep(Math.min(backoff(head.failures), request.deadline - now()));
      }
      return;
    }
    if (head.settled) return;
    head.failures = 0;
    head.lastError = undefined;
    await queue.sleep(Math.min(retryIn(result, list?.entryLease), request.deadline - now()));
  }

  /** An attempt of the waiter's failed: the wait goes on, and ends with this error if it is the last. */
  private failedAttempt(waiter: Waiter, error: unknown): void {
    waiter.failures += 1;
    waiter.lastError = error;
    this.host.failed(waiter.request, error, waiter.failures);
  }

  /** Takes this client off the key's waiting list (none of its waiters waits any longer). */
  private leaveList(queue: WaitQueue): void {
    const list = this.host.store.waitingList;
    if (!queue.listed || !list) return;
    queue.listed = false;
    // Closing, the connection may be gone first: the entry then expires with its lease.
    this.leaving.track(list.leave(queue.keys, this.host.timeoutFor(list.entryLease)).catch((error: unknown) => this.host.closed || this.host.error(error)));
  }
}
