import { isFinal } from '../errors/final.js';
import { LockError } from '../errors/LockError.js';
import type { LockLostError } from '../errors/LockLostError.js';
import type { Primitive } from '../primitives/primitive.js';
import type { AcquireResult, Granted, LockKeys, Store } from '../store/types.js';
import { raceAbort } from '../util/abort.js';
import type { Watchdog } from '../watchdog/watchdog.js';
import { backoff, pause } from './backoff.js';
import { rejectedOutcome, type EventHub } from './event-hub.js';
import { FairWaits } from './fair-waits.js';
import { Hold, type HoldListener } from './hold.js';
import { lateGrant } from './late-grant.js';
import { HoldRegistry } from './registry.js';
import { LocalWaits, type ListedAttempt } from './local-waits.js';
import { releaseHold } from './release.js';
import type { AcquireRequest, WaitHost } from './request.js';
import { unavailable } from './unavailable.js';

const now = () => performance.now();

export interface EngineSettings {
  /** Lease of a hold taken without one (and of a fair waiter's queue entry). */
  readonly watchdogTimeout: number;
  /** Bound of one Redis call about a lock with this lease. */
  readonly timeoutFor: (lease: number) => number;
}

/**
 * Takes and gives back holds for every primitive, over one store: a reentry, one
 * attempt, or a wait (local queue or fair queue), then the hold's life until it ends.
 * Handles reach it through LockPort only.
 */
export class Engine implements WaitHost, HoldListener {
  readonly holds = new HoldRegistry();
  private readonly local: LocalWaits;
  /** The fair queue's waits (release.ts hands them a fair release's grant). */
  readonly fair: FairWaits;
  private isClosed = false;
  private startRejecting: () => void = () => undefined;
  readonly rejectingWaits = new Promise<void>((resolve) => (this.startRejecting = resolve));
  /** Waits begun while a probe was attached (followedWait): only these report to probes. */
  private readonly followed = new Set<AcquireRequest>();

  constructor(
    readonly store: Store,
    readonly watchdog: Watchdog,
    readonly events: EventHub,
    readonly settings: EngineSettings,
  ) {
    this.local = new LocalWaits(this);
    this.fair = new FairWaits(this, settings.watchdogTimeout);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  timeoutFor(lease: number): number {
    return this.settings.timeoutFor(lease);
  }

  assertOpen(): void {
    if (this.isClosed) throw new LockError('client closed');
  }

  /**
   * Takes the lock for owner: a reentry, one attempt (waitTime 0), or a wait. Resolves
   * with the hold, or null when the wait ran out while the lock was held by another
   * owner; rejects with LockUnavailableError when its last attempt failed.
   */
  acquire(primitive: Primitive, keys: LockKeys, owner: string, leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined): Promise<Hold | null> {
    // Not async: a call that queues at once (a contended lock) returns the wait's own
    // promise, one layer less per acquisition; the checks reject instead of throwing.
    if (this.isClosed) return Promise.reject(new LockError('client closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const start = now();
    const request: AcquireRequest = {
      keys,
      owner,
      primitive,
      lease: leaseTime ?? this.settings.watchdogTimeout,
      renewed: leaseTime === undefined,
      start,
      deadline: waitTime === undefined ? Infinity : start + waitTime,
      signal,
    };
    if (primitive.waits === 'local') this.local.acquiring(keys.id);
    const mine = this.holds.get(keys.id, owner);
    // A reentry never queues: a waiter behind us would wait for our own release.
    if (mine?.joinable) return this.reenterOrWait(request, mine, waitTime);
    return this.attemptOrWait(request, waitTime);
  }

  private async reenterOrWait(request: AcquireRequest, mine: Hold, waitTime: number | undefined): Promise<Hold | null> {
    const reentered = await this.reenter(request, mine, waitTime === 0);
    if (reentered !== 'taken') return reentered;
    if (waitTime === 0) return null;
    // Someone else holds it now: the hold is lost, and this call waits like a new one.
    return this.attemptOrWait(request, waitTime);
  }

  /** One attempt first (unless it would barge in on waiters), then a wait if it may. */
  private attemptOrWait(request: AcquireRequest, waitTime: number | undefined): Promise<Hold | null> {
    const { primitive, keys, owner } = request;
    const queueFirst = primitive.waits === 'local' && waitTime !== 0 && this.local.shouldQueue(keys.id, owner);
    if (queueFirst || (primitive.waits !== 'local' && waitTime !== 0)) return this.wait(request, undefined);
    return this.attemptThenWait(request, waitTime);
  }

  private async attemptThenWait(request: AcquireRequest, waitTime: number | undefined): Promise<Hold | null> {
    const { keys, signal } = request;
    // A call that will wait joins the waiting list with its first attempt (LocalWaits.joining).
    const listed = waitTime === 0 ? undefined : this.local.joining(request);
    let lastError: unknown;
    try {
      let result: AcquireResult;
      try {
        result = await this.attemptOnce(request, 0, listed !== undefined);
      } finally {
        if (listed) this.local.joinSettled(keys);
      }
      if (result.granted) return this.grant(request, result);
      if (listed) listed.refused = result;
    } catch (error) {
      if (signal?.aborted || isFinal(error)) throw error;
      if (waitTime === 0) throw unavailable(keys.name, error);
      lastError = error;
      this.failed(request, error, 1);
    }
    if (waitTime === 0) return null;
    return this.wait(request, lastError, listed);
  }

  /**
   * A wait, told to the event hub's probes: a local wait blocks from the start (its
   * attempt was refused, or it queues behind others); a fair wait says so itself
   * (blocked()), after its first attempt in the queue.
   */
  private wait(request: AcquireRequest, lastError: unknown, listed?: ListedAttempt): Promise<Hold | null> {
    const local = request.primitive.waits === 'local';
    // Nobody follows waits: no wrapper on the contended path (fair blocked() is a no-op then).
    if (!this.events.probed) return local ? this.local.wait(request, lastError, listed) : this.fair.wait(request, lastError);
    return this.followedWait(request, lastError, local, listed);
  }

  private async followedWait(request: AcquireRequest, lastError: unknown, local: boolean, listed?: ListedAttempt): Promise<Hold | null> {
    this.followed.add(request);
    if (local) this.events.waitBlocked(request);
    try {
      const hold = await (local ? this.local.wait(request, lastError, listed) : this.fair.wait(request, lastError));
      this.events.waitEnded(request, hold ? 'acquired' : 'timeout');
      return hold;
    } catch (error) {
      this.events.waitEnded(request, rejectedOutcome(request, error, this.isClosed), error);
      throw error;
    } finally {
      this.followed.delete(request);
    }
  }

  /**
   * A reentry: retried in place (with backoff) while Redis fails, until the wait ends.
   * 'taken' when Redis says another owner holds the lock: the hold is lost.
   */
  private async reenter(request: AcquireRequest, mine: Hold, once: boolean): Promise<Hold | 'taken'> {
    for (let failures = 0; ; ) {
      try {
        const result = await this.attemptOnce(request, mine.levelsHeld);
        if (result.granted) return this.grant(request, result);
        mine.lose('taken');
        return 'taken';
      } catch (error) {
        if (request.signal?.aborted) throw error;
        failures += 1;
        if (once || now() >= request.deadline) throw unavailable(request.keys.name, error);
        this.failed(request, error, failures);
        await pause(Math.min(backoff(failures), request.deadline - now()), request.signal);
      }
    }
  }

  /** One attempt; `joins`: refused, it puts this client on the waiting list (the caller waits). */
  private attemptOnce(request: AcquireRequest, held: number, joins = false): Promise<AcquireResult> {
    const { primitive, keys, owner, lease, signal } = request;
    const call = primitive.attempt(this.store, keys, owner, lease, held, this.timeoutFor(lease), joins);
    // Aborted on its way: a grant is given back, a join taken back.
    return raceAbort(call, signal, (late) => (late.granted ? this.giveBack(request) : joins && this.local.joinedWithoutWait(keys)));
  }

  /** Drops one level of hold; at the last, releases or hands the lock to the next local waiter. */
  release(hold: Hold): Promise<void> {
    return releaseHold(this, this.local, hold);
  }

  /** Deletes the lock whoever holds it; local holds of it are lost ('deleted'). */
  async forceUnlock(keys: LockKeys, primitive?: Primitive): Promise<boolean> {
    this.assertOpen();
    const timeout = this.timeoutFor(this.settings.watchdogTimeout);
    const deleted = await (primitive?.forceUnlock ? primitive.forceUnlock(this.store, keys, timeout) : this.store.forceUnlock(keys, timeout));
    for (const hold of [...this.holds.of(keys.id)]) hold.lose('deleted');
    return deleted;
  }

  /**
   * Stops renewing, leaves the waiting lists, drops the subscriptions, then rejects
   * pending waits (last, so that a caller who awaits close() before handling its waits'
   * rejections handles them in time; waits that notice the close earlier wait for
   * rejectingWaits); the store closes after.
   */
  async close(): Promise<void> {
    this.isClosed = true;
    this.watchdog.stop();
    await Promise.all([this.local.leaveAll(), this.fair.leaveAll()]);
    await this.store.dropSubscriptions();
    this.startRejecting();
    this.local.rejectAll(new LockError('client closed'));
    this.fair.wakeAll();
  }

  // ---- WaitHost --------------------------------------------------------------------

  levelsOf(key: string, owner: string): number {
    return this.holds.get(key, owner)?.levelsHeld ?? 0;
  }

  heldByOther(key: string, owner: string): boolean {
    return this.holds.heldByOther(key, owner);
  }

  grant(request: AcquireRequest, granted: Granted): Hold {
    const { keys, owner } = request;
    const late = lateGrant(request, granted);
    if (late) {
      this.giveBack(request);
      throw late;
    }
    const current = this.holds.get(keys.id, owner);
    if (current?.joinable) {
      current.reenter(granted.validUntil);
      this.watchdog.touched(current);
      return current;
    }
    const hold = new Hold(keys, owner, granted.token, request.lease, request.renewed, granted.validUntil, request.primitive, this);
    this.holds.add(hold);
    this.watchdog.track(hold);
    // Guarded here too: the payload closure is not even made on the hot path.
    if (this.events.active('acquired', keys.name)) this.events.publish('acquired', keys.name, () => ({ name: keys.name, owner, kind: request.primitive.kind, token: granted.token, waitedMs: now() - request.start }));
    this.events.holdBegan(hold);
    return hold;
  }

  /**
   * Gives back a grant nobody will use (a waiter that left while it was on its way, a
   * reentry aborted while out). It passes the levels Redis counts with that grant, so a
   * resend of the give-back drops nothing the owner still holds.
   */
  giveBack(request: AcquireRequest): void {
    const { keys, owner, primitive } = request;
    const levels = this.levelsOf(keys.id, owner) + 1;
    primitive.release(this.store, keys, owner, levels, this.timeoutFor(this.settings.watchdogTimeout)).then(
      () => this.local.wake(keys.id),
      (error: unknown) => this.events.error(new LockError(`could not give back an unused grant of '${keys.name}'; it expires with its lease`, { cause: error, lockName: keys.name })),
    );
  }

  failed(request: AcquireRequest, error: unknown, attempt: number): void {
    const { name } = request.keys;
    this.events.publish('acquireFailed', name, () => ({ name, owner: request.owner, kind: request.primitive.kind, error: error instanceof Error ? error : new Error(String(error)), attempt }));
  }

  blocked(request: AcquireRequest): void {
    // Only a wait followedWait() also ends: a probe attached mid-wait leaves no stray entry.
    if (this.followed.has(request)) this.events.waitBlocked(request);
  }

  error(error: unknown): void {
    this.events.error(error);
  }

  // ---- HoldListener ----------------------------------------------------------------

  lost(hold: Hold, error: LockLostError): void {
    const { name } = hold.keys;
    this.events.publish('lost', name, () => ({ name, owner: hold.owner, kind: hold.primitive.kind, reason: error.reason, error }));
  }

  released(hold: Hold): void {
    const { name } = hold.keys;
    if (this.events.active('released', name)) this.events.publish('released', name, () => ({ name, owner: hold.owner, kind: hold.primitive.kind }));
  }

  ended(hold: Hold): void {
    this.watchdog.untrack(hold);
    this.events.holdEnded(hold);
    // A lost hold stays known until its outstanding unlocks have rejected (see unwind).
    if (hold.state !== 'lost') this.holds.remove(hold);
    this.local.wake(hold.keys.id);
  }
}
