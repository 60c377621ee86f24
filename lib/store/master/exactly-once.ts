import type { RedisClientPort } from '../client/redis-client.js';
import type { AcquireReply } from '../scripts/acquire.js';
import * as maintain from '../scripts/maintain.js';
import type { ReleaseReply } from '../scripts/release.js';
import type { HeldLevels, LockKeys } from '../types.js';
import { CommandTimeoutError } from '../../errors/CommandTimeoutError.js';
import { LockError } from '../../errors/LockError.js';
import { boundThen, withTimeout } from '../../util/timeout.js';
import { UnsettledCalls } from './unsettled.js';

const now = () => performance.now();

/** Bound of a give-back sent in the background (rules 3, 4 after a call's bound ran out). */
const GIVE_BACK_TIMEOUT = 5_000;
/** The bound's message when an acquisition could not go out (see UnsettledCalls). */
const BEHIND = 'an earlier call of this owner on';

/**
 * Gives back one level of owner's: `levels` is what Redis counts with the grant being
 * given back. Each primitive's own release script: a grant goes back the way its holds do.
 */
export type GiveBack<K extends LockKeys = LockKeys> = (keys: K, owner: string, timeout: number, levels: number) => Promise<unknown>;

/**
 * Applying each lock call once, whatever the connection does. A call can time out here
 * and still be carried out there; and what happens to a call whose connection breaks
 * before its reply depends on the client library:
 * - ioredis and iovalkey resend it after the reconnect (autoResendUnfulfilledCommands;
 *   a Cluster retries it on another connection), maybe to a master restarted empty: it
 *   may run twice, and a reply can come from its second run (rules 1, 2, 5);
 * - node-redis rejects it with the socket's error, never resends it (a cluster does not
 *   retry it elsewhere): it ran once or not at all, and the caller cannot tell (rules
 *   3, 6). Calls not yet written when the connection broke wait in its offline queue
 *   and go out once after the reconnect (rule 2 then only confirms the level).
 * Either way the connection's break moves the epoch (RedisClientPort.onBreak) before
 * the calls that were out settle, so each rule sees it.
 *
 * Invariant: when a call settles, the levels Redis counts for (key, owner) are the
 * levels the client counts after it, or the call has sent what restores that:
 * 1. Release scripts take the levels the client holds before the call and apply only
 *    when Redis has as many: a resent release finds fewer and changes nothing.
 * 2. A grant whose connection closed while it was out (the epoch moved) may have run
 *    twice: its level is set to the client's count afterwards (set-level.lua); found
 *    no longer held then, it is no grant (the attempt fails).
 * 3. A grant that failed with its connection, maybe after the server ran it, is given
 *    back (a new hold) or set back (a reentry); one that failed so after its call
 *    timed out is given back as in rule 4.
 * 4. A grant that arrives after its call timed out is given back, passing the client's
 *    levels + 1, so a resend of the give-back drops nothing the owner still holds.
 * 5. A last release answered "not held" after a reconnect may be a resend of one that
 *    already ran: the hold ended either way, so it counts as released, with the time
 *    the connection last broke before the release was sent (brokeAt): a hold Redis had
 *    not confirmed since then may have been lost then, which the engine tells.
 * 6. A release that granted the lock to the queue's head (its reply lost or late) needs
 *    no repair: the grant's mark stands in Redis for that wait, which takes it up from
 *    the message or its next attempt, or gives it back as it leaves.
 * 7. Each rule counts on the owner having no other call on the lock out: a call still
 *    out past its bound (with the give-back it may cause), and any give-back, hold the
 *    owner's next acquisition of that lock back until they settle (unsettled.ts). A
 *    Cluster retries a call whose connection closed after a delay, so an owner's calls
 *    could otherwise reach Redis out of order: a later attempt's level set (rule 2)
 *    ahead of an earlier attempt's late give-back (rule 4) would leave one give-back
 *    too many, freeing the lock under its new holder.
 */
/** A last release answered "not held" after a reconnect (rule 5). */
const resent = (brokeAt: number | undefined): ReleaseReply => (brokeAt === undefined ? { kind: 'released' } : { kind: 'released', brokeAt });

export class ExactlyOnce<K extends LockKeys = LockKeys> {
  /**
   * Counts the connection's closes (a Cluster's: any node connection's). A reply to a
   * command sent in an earlier epoch may come from a second run of it.
   */
  epoch = 0;
  /** Monotonic time of the connection's last close (undefined: never closed). */
  private brokeAt: number | undefined;
  private readonly offBreak: () => void;
  private readonly unsettled = new UnsettledCalls();

  constructor(
    private readonly connection: RedisClientPort,
    /** The levels the client holds now (HeldLevels says when and why they are asked). */
    private readonly levels: HeldLevels,
    /** Never rejects (a failed give-back expires with its lease). */
    private readonly giveBack: GiveBack<K>,
  ) {
    this.offBreak = connection.onBreak(() => {
      this.epoch += 1;
      this.brokeAt = now();
    });
  }

  close(): void {
    this.offBreak();
  }

  /**
   * Runs an acquire script once; `held`: levels before the call (rules 2-4).
   * `send` sends it: at once, or once owner's earlier calls on the lock have settled
   * (unsettled.ts), within the same `timeout`. Resolves with `finish(reply)`, once the
   * reply counts.
   * Not async: a reply in the same epoch settles it in one step (the hot path), the
   * caller's `finish` included.
   */
  grant<R, P extends AcquireReply = AcquireReply>(k: K, owner: string, held: number, timeout: number, send: () => Promise<P>, finish: (reply: P) => R): Promise<R> {
    const earlier = this.settled(k, owner, timeout);
    if (!earlier) return this.granted(k, owner, held, timeout, send(), finish);
    return earlier.then((left) => this.granted(k, owner, held, left, send(), finish));
  }

  /** Owner has no earlier call on the lock unsettled: an acquisition may go out at once. */
  clear(k: K, owner: string): boolean {
    return this.unsettled.clear(k, owner);
  }

  /**
   * undefined when owner has no earlier call on the lock unsettled (send at once); else
   * the time left of `timeout` once they have settled (rejects with a CommandTimeoutError
   * if they outlast it). For acquisitions with a grant of their own too: semaphore.ts.
   */
  settled(k: K, owner: string, timeout: number): Promise<number> | undefined {
    if (this.unsettled.clear(k, owner)) return undefined;
    const until = now() + timeout;
    return this.unsettled.settled(k, owner, timeout, BEHIND).then(() => Math.max(1, until - now()));
  }

  /**
   * An acquisition whose bound ran out, still out: it may grant late (rule 4), or fail
   * with its connection after the server ran it (rule 3). Either way one level is given
   * back, passing the levels Redis counts with it (the client's + 1), so a give-back of
   * a grant that never ran drops nothing; owner's next acquisitions of the lock wait
   * for all of it (rule 7). `epoch`: the connection's when the call was sent.
   */
  unanswered(k: K, owner: string, call: Promise<{ granted: boolean }>, epoch: number): void {
    const back = () => this.giveBack(k, owner, GIVE_BACK_TIMEOUT, this.levels.levelsOf(k.id, owner) + 1);
    this.unsettled.record(
      k,
      owner,
      call.then(
        (late) => late.granted && back(),
        () => this.epoch !== epoch && back(),
      ),
    );
  }

  private granted<R, P extends AcquireReply>(k: K, owner: string, held: number, timeout: number, call: Promise<P>, finish: (reply: P) => R): Promise<R> {
    const epoch = this.epoch;
    // The call's bound ends here; the repairs of rules 2 and 3 are part of the call, within it.
    const until = now() + timeout;
    return boundThen(
      call,
      timeout,
      'acquire',
      k.name,
      (reply) => (reply.granted && this.epoch !== epoch ? this.regranted(k, owner, held + 1, until, () => finish(reply)) : finish(reply)),
      (error: unknown) => this.grantFailed(k, owner, held, until, call, epoch, error),
    );
  }

  /**
   * Rules 3 and 4. The repair of a call that failed with its connection is part of the
   * call, so it gets what is left of the call's bound (`until`); a give-back or level
   * check still out then stays recorded as unsettled (rule 7).
   */
  private async grantFailed(k: K, owner: string, held: number, until: number, call: Promise<AcquireReply>, epoch: number, error: unknown): Promise<never> {
    if (error instanceof CommandTimeoutError) {
      this.unanswered(k, owner, call, epoch);
    } else if (this.epoch !== epoch) {
      if (held === 0) await this.giveBack(k, owner, Math.max(1, until - now()), 1);
      else await this.settleLevel(k, owner, held, until - now());
    }
    throw error;
  }

  /**
   * Runs a release script once (rules 1, 5).
   * Resolves with `finish(reply)`. Not async, like grant().
   */
  release<R>(k: K, owner: string, held: number, timeout: number, call: Promise<ReleaseReply>, finish: (reply: ReleaseReply) => R): Promise<R> {
    // A give-back passes one level more than the client holds (rules 3, 4): owner's
    // next acquisition of the lock waits for it (rule 7).
    if (held > this.levels.levelsOf(k.id, owner)) this.unsettled.record(k, owner, call);
    const epoch = this.epoch;
    const brokeAt = this.brokeAt;
    return boundThen(
      call,
      timeout,
      'release',
      k.name,
      (reply) => (reply.kind === 'notHeld' && held === 1 && this.epoch !== epoch ? finish(resent(brokeAt)) : finish(reply)),
      (error: unknown) => this.releaseFailed(k, owner, call, error),
    );
  }

  private releaseFailed(k: K, owner: string, call: Promise<ReleaseReply>, error: unknown): never {
    // A release run after the same owner (a scope) took the lock again would free it
    // under that new hold: its next acquisitions wait for this one to settle.
    if (error instanceof CommandTimeoutError) this.unsettled.record(k, owner, call);
    throw error;
  }

  /**
   * Sets owner's level to what the client holds. Not done in the acquire script by
   * comparing levels: a retry by the same owner while its previous attempt's grant is
   * being given back looks just like a resend there.
   */
  private async settleLevel(k: K, owner: string, level: number, timeout: number): Promise<'set' | 'notHeld' | 'unknown'> {
    // The connection may break again meanwhile (a Cluster rejects rather than resends
    // then): the call is idempotent, so try until it is answered or time runs out. It
    // goes out at least once, with no time left too: one unanswered is recorded (rule 7).
    const until = now() + timeout;
    for (let sent = false; ; sent = true) {
      const left = until - now();
      if (sent && left <= 0) return 'unknown';
      const call = maintain.setLevel.run(this.connection, [k.key], [owner, level]);
      const held = await withTimeout(call, Math.max(1, left), 'acquire', k.name).then(
        (set) => (set ? 'set' : 'notHeld'),
        (error: unknown) => void (error instanceof CommandTimeoutError && this.unsettled.record(k, owner, call)),
      );
      if (held) return held;
      await new Promise((resolve) => setTimeout(resolve, Math.min(20, Math.max(0, until - now()))));
    }
  }

  /**
   * Rule 2 for a grant: its level set to the client's count, within what is left of the
   * call's bound (`until`): a wait settles within its budget plus one command bound
   * (DESIGN "Waiting"), and the grant may have come at the end of it. A grant that is no
   * longer held by then (its master restarted empty, the lock deleted, meanwhile) is no
   * hold: the attempt fails. Unanswered in time, the grant stands (a level too many is
   * dropped by the last unlock, see release.ts 'decremented'; a hold that is gone is
   * found by its next renewal, or ends with its lease).
   */
  private async regranted<R>(k: K, owner: string, level: number, until: number, finish: () => R): Promise<R> {
    if ((await this.settleLevel(k, owner, level, until - now())) === 'notHeld') {
      throw new LockError(`acquire of '${k.name}' was granted while the connection broke, and the hold was gone when it was checked after the reconnect`, { lockName: k.name });
    }
    return finish();
  }
}
