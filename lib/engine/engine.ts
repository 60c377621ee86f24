import { isFinal } from '../errors/final.js';
import { LockError } from '../errors/LockError.js';
import type { LockLostError } from '../errors/LockLostError.js';
import type { Primitive } from '../primitives/primitive.js';
import type { AcquireResult, Granted, LockKeys, Store } from '../store/types.js';
import type { Watchdog } from '../watchdog/watchdog.js';
import { backoff, pause } from './backoff.js';
import { rejectedOutcome, type EventHub } from './event-hub.js';
import { Hold, type HoldListener } from './hold.js';
import { HolderChannel } from './holder-channel.js';
import { lateGrant } from './late-grant.js';
import type { HoldRegistry } from './registry.js';
import { releaseHold } from './release.js';
import { attemptTimeout, type AcquireRequest, type WaitHost } from './request.js';
import { unavailable } from './unavailable.js';
import { Waits } from './waits.js';

const now = () => performance.now();

export interface EngineSettings {
  /** Lease of a hold taken without one (and of a waiter's place in a queue). */
  readonly watchdogTimeout: number;
  /** Bound of one Redis call about a lock with this lease. */
  readonly timeoutFor: (lease: number) => number;
}

/**
 * Takes and gives back holds for every primitive, over one store: a reentry, one
 * attempt, or a wait (engine/waits.ts), then the hold's life until it ends.
 * Handles reach it through LockPort only.
 */
export class Engine implements WaitHost, HoldListener {
  /** Every wait (release.ts hands them a release's grant to a wait of this client). */
  readonly waits: Waits;
  private isClosed = false;
  private startRejecting: () => void = () => undefined;
  readonly rejectingWaits = new Promise<void>((resolve) => (this.startRejecting = resolve));
  /** Waits begun while a probe was attached (followedWait): only these report to probes. */
  private readonly followed = new Set<AcquireRequest>();
  /** Where requestRelease and forceUnlock reach this client's holds (subscribed on the first hold). */
  private readonly holderChannel: HolderChannel;

  /** @param holds this client's holds; the store reads their levels too (HeldLevels), so the client makes it first. */
  constructor(
    readonly store: Store,
    readonly watchdog: Watchdog,
    readonly events: EventHub,
    readonly settings: EngineSettings,
    readonly holds: HoldRegistry,
  ) {
    this.waits = new Waits(this, settings.watchdogTimeout);
    this.holderChannel = new HolderChannel(store, this.holds, events);
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
   * owner; rejects with LockUnavailableError when its last attempt failed. `settleBy`:
   * see AcquireRequest (a multi-lock's take).
   */
  acquire(primitive: Primitive, keys: LockKeys, owner: string, leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined, settleBy = Infinity): Promise<Hold | null> {
    // Not async: a call that queues at once (a contended lock) returns the wait's own
    // promise, one layer less per acquisition; the checks reject instead of throwing.
    // Closing: rejected once close() has resolved, as the waits it ends are (a caller who
    // awaits close() before handling its calls is in time).
    if (this.isClosed) return this.rejectingWaits.then(() => Promise.reject(new LockError('client closed')));
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
      settleBy,
      signal,
    };
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

  /**
   * A call that may wait goes to the wait, whose first attempt joins the queue when
   * refused (the only round trip when the lock is free); one attempt (waitTime 0) stands
   * alone.
   */
  private attemptOrWait(request: AcquireRequest, waitTime: number | undefined): Promise<Hold | null> {
    if (waitTime !== 0) return this.wait(request);
    return this.attemptOnly(request);
  }

  private async attemptOnly(request: AcquireRequest): Promise<Hold | null> {
    const { keys, signal, primitive } = request;
    // Waits 'client' of this key are lined up here: one attempt does not pass them.
    if (primitive.waits === 'client' && this.waits.lined(keys.id)) return null;
    try {
      const result = await this.attemptOnce(request, 0);
      // A grant read after its lease ran out is given back and thrown (late-grant.ts): a failed attempt.
      return result.granted ? this.grant(request, result) : null;
    } catch (error) {
      if (signal?.aborted || isFinal(error)) throw error;
      throw unavailable(keys.name, error);
    }
  }

  /** A wait, told to the event hub's probes (the wait says itself when it blocks: blocked()). */
  private wait(request: AcquireRequest): Promise<Hold | null> {
    // Nobody follows waits: no wrapper on the contended path (blocked() is a no-op then).
    if (!this.events.probed) return this.waits.wait(request);
    return this.followedWait(request);
  }

  private async followedWait(request: AcquireRequest): Promise<Hold | null> {
    this.followed.add(request);
    try {
      const hold = await this.waits.wait(request);
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

  /**
   * One attempt that never queues. It settles after its cleanup: aborted on its way, it
   * rejects with the signal's reason once it has answered (within the command timeout);
   * a grant it brought then, or one read after its lease ran out (late-grant.ts), is
   * given back before the call fails.
   */
  private async attemptOnce(request: AcquireRequest, held: number): Promise<AcquireResult> {
    const { primitive, keys, owner, lease, signal } = request;
    const result = await primitive.attempt(keys, owner, lease, held, attemptTimeout(this, request)).catch((error: unknown) => {
      throw signal?.aborted ? signal.reason : error;
    });
    const failure: unknown = signal?.aborted ? signal.reason : result.granted ? lateGrant(request, result) : undefined;
    if (failure === undefined) return result;
    if (result.granted) await this.giveBack(request);
    throw failure;
  }

  /** Drops one level of hold; at the last, releases it (a queue's release may grant it to a wait of this client). */
  release(hold: Hold): Promise<void> {
    return releaseHold(this, hold);
  }

  /** Asks every holder of the lock to let go (their holds' signals abort); the owners asked. */
  async requestRelease(keys: LockKeys, primitive?: Primitive): Promise<number> {
    this.assertOpen();
    const timeout = this.timeoutFor(this.settings.watchdogTimeout);
    const owners = await (primitive?.requestRelease ? primitive.requestRelease(keys, timeout) : this.store.requestRelease(keys, timeout));
    return owners.length;
  }

  /** Deletes the lock whoever holds it; local holds of it are lost ('deleted'). */
  async forceUnlock(keys: LockKeys, primitive?: Primitive): Promise<boolean> {
    this.assertOpen();
    const timeout = this.timeoutFor(this.settings.watchdogTimeout);
    const deleted = await (primitive?.forceUnlock ? primitive.forceUnlock(keys, timeout) : this.store.forceUnlock(keys, timeout));
    for (const hold of [...this.holds.of(keys.id)]) hold.lose('deleted');
    return deleted;
  }

  /**
   * Stops renewing, leaves the queues, drops the subscriptions, then rejects
   * pending waits (last, so that a caller who awaits close() before handling its waits'
   * rejections handles them in time; waits that notice the close earlier wait for
   * rejectingWaits); the store closes after.
   */
  async close(): Promise<void> {
    this.isClosed = true;
    this.watchdog.stop();
    await this.waits.leaveAll();
    await this.store.dropSubscriptions();
    this.startRejecting();
    this.waits.wakeAll();
  }

  // ---- WaitHost --------------------------------------------------------------------

  grant(request: AcquireRequest, granted: Granted): Hold {
    const { keys, owner } = request;
    const late = lateGrant(request, granted);
    if (late) {
      void this.giveBack(request);
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
    this.holderChannel.watch(owner);
    this.watchdog.track(hold);
    // Guarded here too: the payload closure is not even made on the hot path.
    if (this.events.active('acquired', keys.name)) this.events.publish('acquired', keys.name, () => ({ name: keys.name, owner, kind: request.primitive.kind, token: granted.token, waitedMs: now() - request.start }));
    this.events.holdBegan(hold);
    return hold;
  }

  /**
   * Gives back a grant nobody will use (a waiter that left while it was on its way, a
   * reentry aborted while out). It passes the levels Redis counts with that grant, so a
   * resend of the give-back drops nothing the owner still holds. Resolves once it has
   * settled (bounded); never rejects: a failure goes to `error`.
   */
  giveBack(request: AcquireRequest): Promise<void> {
    const { keys, owner, primitive } = request;
    const levels = this.holds.levelsOf(keys.id, owner) + 1;
    return primitive.release(keys, owner, levels, this.timeoutFor(this.settings.watchdogTimeout)).then(
      () => this.waits.freed(keys.id),
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
    this.waits.freed(hold.keys.id);
  }
}
