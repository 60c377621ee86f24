import { LockError } from '../errors/LockError.js';
import type { Granted, LockKeys, NextOwner, Refused } from '../store/types.js';
import { currentScope } from '../scope.js';
import { atDeadline, retryIn } from './backoff.js';
import { DeferredWakes } from './deferred-wake.js';
import type { Hold } from './hold.js';
import { ListMembership } from './list-membership.js';
import { failedAttempt, pump } from './pump.js';
import type { AcquireRequest, WaitHost } from './request.js';
import { SelfDeadlockWatch } from './self-deadlock.js';
import { unavailable } from './unavailable.js';
import { WaitQueue, type Waiter } from './wait-queue.js';

/**
 * A caller's own attempt that joins the waiting list (sent with `queued`), for the wait
 * that follows it: the key's lingering queue and its wake count when it was sent (see
 * LocalWaits.joining), and its refusal.
 */
export interface ListedAttempt {
  readonly sent: { readonly queue: WaitQueue; readonly wakes: number } | undefined;
  refused: Refused | undefined;
}

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
  /** This client's entries on the waiting lists in Redis. */
  private readonly membership: ListMembership;
  private readonly queues = new Map<string, WaitQueue>();
  private readonly deferredWakes: DeferredWakes;
  /** Waits made outside every scope, watched for the silent self-deadlock. */
  private readonly stalls: SelfDeadlockWatch;
  /** Callers' first attempts out that join a waiting list (joining() to joinSettled()). */
  private joinsOut = 0;
  /** close() calls waiting for joinsOut to reach 0 (leaveAll). */
  private readonly joinsDrained: (() => void)[] = [];

  constructor(private readonly host: WaitHost) {
    this.stalls = new SelfDeadlockWatch((key, owner) => host.heldByOther(key, owner));
    this.membership = new ListMembership(host);
    this.deferredWakes = new DeferredWakes(host);
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
    this.deferredWakes.cancel(key);
  }

  /** A release woke nobody: unless this client takes the lock again at once, it wakes the waiting list's head. */
  deferred(keys: LockKeys): void {
    this.deferredWakes.defer(keys);
  }

  /** Whether this client's last release of key wakes the head though its turn has not come (DeferredWakes). */
  wakesHead(key: string): boolean {
    return this.deferredWakes.wakesHead(key);
  }

  /** A last release of key woke the head at once (wakesHead). */
  wokeHead(key: string): void {
    this.deferredWakes.wokeHead(key);
  }

  /**
   * Before a caller's first attempt, when the caller may wait: where the store keeps a
   * waiting list, the attempt joins it when refused (undefined: it does not). The place
   * on the list then dates from the call, and when the key's pump is subscribed already
   * (lingering) the wait skips the pump's first attempt (see wait()): one round trip
   * less per contended wait. The caller reports the attempt's end to joinSettled().
   */
  joining(request: AcquireRequest): ListedAttempt | undefined {
    if (request.primitive.waits !== 'local' || !this.host.store.waitingList) return undefined;
    const queue = this.queues.get(request.keys.id);
    this.joinsOut += 1;
    return { sent: queue?.subscribed && queue.idle ? { queue, wakes: queue.wakes } : undefined, refused: undefined };
  }

  /** The key's queue (a new one if it has none), marked as on the list: a join may have landed. */
  private listedQueue(keys: LockKeys): WaitQueue {
    const queue = this.queues.get(keys.id) ?? new WaitQueue(keys);
    queue.listed = true;
    return queue;
  }

  /**
   * The first attempt of a joining() call has settled (before its outcome is acted on).
   * Closed meanwhile, the call gets no wait that would leave the list, so the client
   * leaves it now (granted, the leave finds nothing to remove); close() waits for every
   * such attempt (leaveAll). A counter, not a tracked promise: the hot path stays free
   * of extra reactions.
   */
  joinSettled(keys: LockKeys): void {
    this.joinsOut -= 1;
    if (this.host.closed) this.membership.leave(this.listedQueue(keys));
    if (this.joinsOut === 0) for (const drained of this.joinsDrained.splice(0)) drained();
  }

  /**
   * A caller's attempt that joins the waiting list ended without a wait (aborted while
   * it was on its way): this client may be on the list, which it leaves unless a wait
   * of its own on the key keeps the place.
   */
  joinedWithoutWait(keys: LockKeys): void {
    const queue = this.listedQueue(keys);
    if (queue.pumping) queue.wake(); // an idle pump leaves the list
    else this.membership.leave(queue);
  }

  /**
   * Waits for the lock; `lastError` is the failure of an attempt made before queueing,
   * `listed` that attempt when it joined the waiting list.
   */
  wait(request: AcquireRequest, lastError?: unknown, listed?: ListedAttempt): Promise<Hold | null> {
    const { keys, signal } = request;
    return new Promise<Hold | null>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      // Closed while the call's first attempt was out: no pump (it would subscribe after
      // close()); the attempt's join, if any, is left by joinSettled().
      if (this.host.closed) return void this.host.rejectingWaits.then(() => reject(new LockError('client closed')));
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
        retryAt: undefined,
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
      const refused = listed?.refused;
      if (listed && refused) {
        // On the list: the queue leaves it once idle. (A failed call may have listed the
        // client too: like a failed attempt of the pump's, its entry then expires.)
        q.listed = true;
        // Refused while this pump was subscribed, and no message came since it was sent:
        // any release after the refusal reaches wake(), so the pump's first attempt would
        // only be refused again; it waits as after a refusal of its own.
        const sent = listed.sent;
        if (sent?.queue === q && q.subscribed && q.wakes === sent.wakes) {
          waiter.retryAt = performance.now() + retryIn(refused, this.host.store.waitingList?.entryLease);
        }
      }
      q.add(waiter);
      // Still the caller's async context: outside every scope, a nested lock() could be
      // waiting for its own caller's hold.
      if (currentScope() === undefined) this.stalls.watch(waiter);
      // The wait ends with the last outcome: held by another owner (null), or the failure.
      deadline = atDeadline(request.deadline, () =>
        waiter.lastError === undefined ? waiter.resolve(null) : waiter.reject(unavailable(keys.name, waiter.lastError)),
      );
      if (waiter.settled) {
        // Over before it began (its deadline passed during the attempt): no pump to
        // leave the list for it.
        if (!q.pumping && q.idle) {
          this.membership.leave(q);
          if (this.queues.get(keys.id) === q) this.queues.delete(keys.id);
        }
        return;
      }
      if (!q.pumping) void pump(q, this.host, this.membership, () => this.queues.get(keys.id) === q && this.queues.delete(keys.id));
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
      failedAttempt(this.host, waiter, error);
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
  async leaveAll(): Promise<void> {
    for (const queue of this.queues.values()) this.membership.leave(queue);
    // First attempts still out leave once they have settled (joinSettled).
    if (this.joinsOut > 0) await new Promise<void>((resolve) => this.joinsDrained.push(resolve));
    await this.membership.settled();
  }
}
