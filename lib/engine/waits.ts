import { isFinal } from '../errors/final.js';
import { LockError } from '../errors/LockError.js';
import { heldUntil } from '../store/lease-margin.js';
import type { Granted, Refused } from '../store/types.js';
import { currentScope } from '../scope.js';
import { Background } from '../util/background.js';
import { settledWithin } from '../util/timeout.js';
import { backoff, refusedSleep } from './backoff.js';
import { Bell } from './bell.js';
import type { Hold } from './hold.js';
import { KeyWatches, subscribedBy, type Wait } from './key-watch.js';
import { attemptTimeout, type AcquireRequest, type WaitHost } from './request.js';
import { SelfDeadlockWatch } from './self-deadlock.js';
import { unavailable } from './unavailable.js';

const now = () => performance.now();

/**
 * The one wait of every primitive. A wait asks (one attempt), and refused it sleeps
 * until a message names it, its sleep bound passes, or its deadline comes; then it asks
 * again. Primitives that wait in a queue in Redis ('queue') join it with their attempts,
 * each of which is also the waiter's heartbeat (at least every third of the heartbeat
 * lease), and a release grants the head directly (see wait() for when a grant's message
 * is taken up). In quorum mode ('client') the waits of a key ask one at a time, oldest
 * first, woken by 'released'. A wait never rests on a broken subscription: when its
 * subscriber connection breaks, every wait of the key asks again. A failed attempt is
 * reported and retried with backoff until the wait ends; a wait that ends without its
 * grant leaves the queue (and gives back a grant it never took up).
 *
 * A wait settles after its cleanup: however it ends without a hold (aborted, its
 * deadline, a final error, the client closing), its promise settles only once its
 * attempt out has answered, a grant that attempt brought has been given back, and its
 * leave (which gives back a grant a release made it) has settled, each within the
 * command timeout. So the caller's next call finds nothing of it in Redis. (A wait whose
 * last attempt failed does not wait for its leave: Redis is not answering.)
 */
export class Waits {
  private readonly watches: KeyWatches;
  /** Waits under way, by id. */
  private readonly waits = new Map<string, Wait>();
  private lastWaitId = 0;
  /** Leaves sent, tracked for leaveAll(). */
  private readonly leaving = new Background();
  private readonly stalls: SelfDeadlockWatch;

  constructor(
    private readonly host: WaitHost,
    /** Lease of a queue entry: a waiter that stops renewing it (a dead process) leaves the queue after this. */
    private readonly heartbeat: number,
  ) {
    this.stalls = new SelfDeadlockWatch((key, owner) => host.holds.heldByOther(key, owner));
    this.watches = new KeyWatches(host, (message) => this.granted(message));
  }

  /** Waits 'client' of this key are queued in this client: a new call goes behind them. */
  lined(keyId: string): boolean {
    return this.watches.lined(keyId);
  }

  /**
   * The client is closing: every waiter leaves its queue now, before close() rejects the
   * waits (a leave sent as a wait ends would come after close() resolved, when the user
   * may close the connection). Resolves once those leaves and the attempts still out
   * have settled (each bounded; an attempt answered after the close gives its grant
   * back before it settles). An attempt still out was sent before its leave, on the
   * same connection: the leave removes what it joined.
   */
  leaveAll(): Promise<void> {
    for (const wait of this.waits.values()) {
      this.leave(wait);
      if (wait.out) this.leaving.track(wait.out);
    }
    return this.leaving.settled();
  }

  /** Wakes every wait (the client is closing: each then rejects) and ends every linger. */
  wakeAll(): void {
    this.watches.wakeAll();
  }

  /**
   * A hold on the key ended in this client (or a grant was given back): the first in its
   * line asks now, and the waits held back by this client's unlock of it go on.
   */
  freed(keyId: string): void {
    this.stalls.changed(keyId);
    this.watches.first(keyId)?.bell.wake();
    this.watches.wakeBehindRelease(keyId);
  }

  /**
   * A release granted the lock to a wait: 'owner wait token' or 'owner wait token stamp'
   * (owner ids hold no white space), from its message, or from the reply of this client's
   * own release (the head may be one of its waits). The stamp, when there is one, dates
   * the grant instead of its token (a read's token does not grow). Not a wait of this
   * client's, or one that has ended (it gave the grant back with its leave, or took it
   * with an attempt, or took it from the other of the two): dropped. While this client's
   * own unlock of the key is on its way, the wait is woken only when that unlock ends.
   */
  granted(message: string): void {
    const [owner, id, token, stamp] = message.split(' ');
    const wait = this.waits.get(id);
    if (!wait || wait.request.owner !== owner || wait.left) return;
    wait.granted = Number(token);
    wait.stamp = stamp === undefined ? undefined : Number(stamp);
    if (!this.host.holds.releasing(wait.request.keys.id)) wait.bell.wake();
  }

  async wait(request: AcquireRequest, lastError?: unknown): Promise<Hold | null> {
    const { keys, owner, signal, deadline, primitive } = request;
    const host = this.host;
    const queued = primitive.waits === 'queue';
    const wait: Wait = { request, id: `w${(++this.lastWaitId).toString(36)}`, joined: false, left: false, bell: new Bell() };
    const ring = () => wait.bell.wake();
    // Aborted, or the client closing: the wait ends without a hold.
    const over = () => host.closed || signal?.aborted === true;
    // One attempt (a waiter holds no level yet: a reentry never waits here). An abort
    // does not cut it short: answered once the wait is over, it settles only after
    // giving back the grant it brought, and then answers undefined.
    const ask = async (): Promise<Granted | Refused | undefined> => {
      const result = await primitive.attempt(keys, owner, request.lease, 0, attemptTimeout(host, request), queued ? wait.id : undefined);
      if (!result.granted) wait.joined = queued;
      if (!over()) return result;
      if (result.granted) await host.giveBack(request);
      return undefined;
    };
    const attempt = () => {
      const out = ask();
      wait.out = out;
      const settled = () => void (wait.out = undefined);
      out.then(settled, settled);
      return out;
    };
    signal?.addEventListener('abort', ring);
    this.waits.set(wait.id, wait);
    // A key this client already watches (another wait, a linger) is joined at once, and
    // subscribed before the first attempt; so are waits 'client' (their line). Otherwise a
    // wait joins once refused: an uncontended call makes no watch and arms no timer.
    let watch = queued && !this.watches.has(keys.id) ? undefined : this.watches.join(keys, owner, wait);
    if (!queued) watch!.line.push(wait);
    let stalled = false;
    let subscribed = false;
    let granted: Granted | undefined;
    let failures = lastError === undefined ? 0 : 1;
    let attempted = false;
    // The wait's last refused attempt: when it was sent, and the name's last token (or
    // grant's stamp) when it ran. A grant with a higher token (or stamp) was made after
    // that attempt ran, so after its send, from which its lease is counted; one not
    // above it was made before and no longer stood then (an attempt would have taken
    // it), so it is stale: given back, expired, or undone. After a failed attempt (which may have taken a
    // grant in Redis that is then given back for it, store/master/exactly-once.ts) no
    // grant is taken up until an attempt is refused again.
    let refusal: { sentAt: number; counter: number } | undefined;
    // Whether the grant a message brought may be taken up now; a stale one is dropped here.
    const usable = (): boolean => {
      if (wait.granted === undefined || refusal === undefined) return false;
      if ((wait.stamp ?? wait.granted) > refusal.counter) return true;
      wait.granted = undefined;
      return false;
    };
    try {
      // Subscribed already (another waiter, or a linger): watched before the first
      // attempt, which then needs no second one after a refusal.
      if (watch?.ready) subscribed = await subscribedBy(wait, watch.ready, deadline);
      for (;;) {
        if (host.closed) {
          // Rejected when the client's close() rejects waits (see WaitHost.rejectingWaits).
          await host.rejectingWaits;
          throw new LockError('client closed');
        }
        signal?.throwIfAborted();
        // The wait ends with its last outcome: held by another owner (null), or the failure.
        if (attempted && !usable() && deadline - now() <= 0) {
          if (lastError !== undefined) throw unavailable(keys.name, lastError);
          return null;
        }
        // While this client's own unlock of the key is on its way, its waits of the key
        // neither ask nor take up a grant; the unlock's end wakes them (freed()). A
        // hand-over within the client is then told in order, 'released' before
        // 'acquired', whichever connection brings the grant first.
        if (host.holds.releasing(keys.id) && (wait.granted !== undefined || deadline - now() > 0)) {
          // Watched, for freed() to find it (subscribed only once refused).
          watch ??= this.watches.join(keys, owner, wait);
          wait.behindRelease = true;
          await wait.bell.sleep(wait.granted === undefined ? deadline - now() : Infinity);
          wait.behindRelease = false;
          continue;
        }
        // Waits 'client' ask one at a time, oldest first. One whose deadline comes while
        // another of its client asks ends as one attempt would then (attemptOnly): the
        // line does not hold it past its budget.
        if (!queued && watch!.line[0] !== wait) {
          if (deadline - now() <= 0) {
            if (lastError !== undefined) throw unavailable(keys.name, lastError);
            return null;
          }
          await wait.bell.sleep(deadline - now());
          continue;
        }
        attempted = true;
        let result: Granted | Refused;
        try {
          if (refusal && usable()) {
            result = takeUp(wait, refusal.sentAt);
          } else {
            const sentAt = now();
            refusal = undefined;
            const answer = await attempt();
            // Over: its grant was given back; a place it joined goes with the leave.
            if (answer === undefined) continue;
            result = answer;
            if (!result.granted) {
              refusal = { sentAt, counter: result.counter ?? Infinity };
              // Granted while this attempt was out, after it ran (taken up now unless
              // this client's unlock of the key is on its way: see above).
              if (!host.holds.releasing(keys.id) && usable()) result = takeUp(wait, sentAt);
            }
          }
          // Read after its lease ran out, host.grant() gives it back and throws: a failed attempt.
          if (result.granted) {
            wait.granted = undefined;
            const hold = host.grant(request, result);
            granted = result;
            return hold;
          }
        } catch (error) {
          // No refusal stands now (see `refusal`): a grant still there goes to the next
          // attempt, or back with the leave.
          refusal = undefined;
          if (signal?.aborted) throw signal.reason;
          if (isFinal(error)) throw error;
          failures += 1;
          lastError = error;
          host.blocked(request);
          host.failed(request, error, failures);
          await wait.bell.sleep(Math.min(backoff(failures), deadline - now()));
          continue;
        }
        failures = 0;
        lastError = undefined;
        host.blocked(request);
        if (!subscribed) {
          // Subscribed before the retry: a release between the two is not missed.
          // Uncontended, the first attempt was the only round trip.
          watch ??= this.watches.join(keys, owner, wait);
          // A wait outside every scope that blocks is watched for the silent self-deadlock.
          if (!stalled && currentScope() === undefined) this.stalls.watch(wait);
          stalled = true;
          subscribed = await subscribedBy(wait, this.watches.subscribe(watch), deadline);
          continue;
        }
        await wait.bell.sleep(Math.min(refusedSleep(result, queued, this.heartbeat), deadline - now()));
      }
    } finally {
      signal?.removeEventListener('abort', ring);
      if (stalled) this.stalls.forget(wait);
      if (watch) this.watches.leave(keys, owner, wait, watch);
      this.waits.delete(wait.id);
      // Settles after its cleanup (see the class; no attempt is out here), unless Redis
      // failed its last attempt, or the leave outlasts the wait's bound (its deadline plus
      // one command bound, DESIGN "Waiting"): the leave then goes on in the background
      // (reported if it fails), so a call does not overrun its bound waiting on a Redis
      // that is gone or slow. The leave of a wait that never took up its grant only
      // removes its own entry (its id is unique) and gives back a grant made to it.
      const leaving = granted ? undefined : this.leave(wait);
      if (leaving && lastError === undefined) await settledWithin(leaving, Math.min(deadline + host.timeoutFor(request.lease), request.settleBy) - now());
    }
  }

  /**
   * Sends the waiter's leave, once, if it joined or an attempt is out (sent before the
   * leave on the same connection, it is applied first). A place that a failed attempt may
   * have taken (its answer never came) expires within two heartbeat leases, and a grant
   * made to it within its lease: a Redis that does not answer is not asked again.
   * Resolves once the leave has settled (bounded; a failure goes to `error`), never rejects.
   */
  private leave(wait: Wait): Promise<unknown> | undefined {
    if (wait.left || !(wait.joined || wait.out)) return undefined;
    wait.left = true;
    const { request } = wait;
    const host = this.host;
    const sent = request.primitive.leave?.(request.keys, request.owner, host.timeoutFor(request.lease), wait.id);
    if (!sent) return undefined;
    // Closing, the connection may be gone first (the user closes it after close()): the
    // entry then expires with its lease.
    const settled = sent.catch((e: unknown) => host.closed || host.error(e));
    this.leaving.track(settled);
    return settled;
  }
}

/** The grant a wait's message brought: its lease counted from `floor`, a send before the grant (see Waits.wait). */
function takeUp(wait: Wait, floor: number): Granted {
  const { lease, primitive } = wait.request;
  return { granted: true, token: primitive.unfenced ? 0 : (wait.granted ?? 0), validUntil: heldUntil(floor, lease) };
}
