import { QuorumError } from '../../errors/QuorumError.js';
import { lagAllowance } from '../lease-margin.js';
import type { MasterStore as Master } from '../master/master.js';
import type { AcquireResult, LockKeys, LockState, ReleaseResult, RenewItem, RenewOutcome, Store } from '../types.js';
import { DOWN, QuorumAcquisition } from './acquisition.js';
import { LongLeaseWarning } from './long-lease.js';
import { SitOut } from './restarts.js';
import { errorVotes, majorityState, majorityValue, untilAgreed, type Reply } from './reads.js';
import { tallyRenewal } from './renewal-tally.js';
import { subscribeMajority } from './subscribe.js';
import { EndedWhileRenewing, restoreHolds } from './restore.js';

const now = () => performance.now();

/**
 * N independent masters (the Redlock algorithm on Redisson's data model): every call
 * goes to all masters in parallel and needs floor(N/2)+1 of them.
 *
 * Fencing tokens across majorities. Each master mints tokens from its own counter;
 * an acquisition returns the maximum T its granting majority minted, after raising
 * every master that answered (granted or not) to at least T ("floor"), and it only
 * succeeds when a majority of masters is known to be at >= T. The next acquisition's
 * majority intersects that majority, and an intersecting master mints > T, so its
 * maximum exceeds T. A master whose counter is gone mints from its own clock
 * (scripts/_mint.lua). Gone because the name went unused: its clock passed the moment
 * it was raised to >= T plus keyRetention (a floor, like a mint, sets the counter's
 * TTL), so it mints above T while the masters' clocks differ by less than keyRetention.
 * Gone in an empty restart: it is not alone in any majority with fewer than a minority
 * of faults, and the next acquisition it answers raises it again, so rolling restarts
 * (one at a time, with an acquisition in between) never make tokens go backwards.
 */
export class QuorumStore implements Store {
  readonly size: number;
  readonly quorum: number;

  constructor(
    readonly masters: readonly Master[],
    private readonly driftFactor: number,
    /** The longest lease a restarted master must sit out (the client's watchdogTimeout). */
    sitOut: number,
    /** This client's mark on each master (see RestartWatch). */
    mark: string,
    /** Background trouble with no caller to reject (a give-back that failed). */
    onError: (error: Error) => void,
  ) {
    this.longLease = new LongLeaseWarning(sitOut);
    this.size = masters.length;
    this.quorum = Math.floor(masters.length / 2) + 1;
    for (const m of masters) m.watchRestarts(sitOut, mark);
    this.sitOut = new SitOut(masters, sitOut, this.quorum);
    this.acquisition = new QuorumAcquisition(masters, this.quorum, this.sitOut, (lease) => this.drift(lease), this.givenBack, onError);
  }

  /** Which masters sit out after a restart (Redlock's delayed restart). */
  private readonly sitOut: SitOut;

  /** A lease longer than the sit-out is not covered by it: warns once. */
  private readonly longLease: LongLeaseWarning;

  /** Redlock's drift (driftFactor of the lease + 2 ms), plus room for late timers as on one master. */
  private drift(lease: number): number {
    return Math.floor(lease * this.driftFactor) + 2 + lagAllowance(lease);
  }

  /** Sends to every master that is up; a down master answers an error at once. */
  private all<T>(call: (m: Master) => Promise<T>): Promise<Reply<T>>[] {
    return this.masters.map((m) =>
      m.down
        ? Promise.resolve({ ok: false as const, error: DOWN })
        : call(m).then(
            (value) => ({ ok: true as const, value }),
            (error: Error) => ({ ok: false as const, error }),
          ),
    );
  }

  /**
   * Per subscribed channel: the masters whose grants this client gave back after its last
   * failed acquire. Giving back publishes "released" there, which would wake our own
   * waiter into the same failing attempt again: a spin of thousands of attempts a second
   * while a holder keeps a majority elsewhere. A holder that blocks us holds on masters
   * that refused us, so their releases still wake us.
   */
  private readonly givenBack = new Map<string, Set<number>>();

  /** Holds ended while renewals were out: renew() does not put those back. */
  private readonly ended = new EndedWhileRenewing();

  private readonly acquisition: QuorumAcquisition;

  acquire(k: LockKeys, owner: string, lease: number, timeout: number, held: number): Promise<AcquireResult> {
    this.longLease.check(k.name, lease);
    const ages = this.sitOut.ready();
    if (!ages) return this.acquisition.attempt(k, owner, lease, timeout, held);
    return ages.then(() => this.acquisition.attempt(k, owner, lease, timeout, held));
  }

  /**
   * Releases on every master; answers once a majority agree (the rest run on). No
   * hand-off in quorum mode: waiters retry on the release.
   */
  async release(k: LockKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult> {
    if (held === 1) this.ended.end(k.key);
    const replies = await untilAgreed(
      this.all((m) => m.release(k, owner, timeout, held)),
      this.quorum,
      (r) => (r.kind === 'decremented' ? `decremented ${r.count}` : r.kind),
    );
    let count = 0;
    let released = 0;
    let notHeld = 0;
    for (const r of replies) {
      if (!r?.ok) continue;
      if (r.value.kind === 'decremented') count = Math.max(count, r.value.count);
      else if (r.value.kind === 'released') released += 1;
      else if (r.value.kind === 'notHeld') notHeld += 1;
    }
    if (count > 0) return { kind: 'decremented', count };
    if (released > 0) return { kind: 'released' };
    if (notHeld > 0) return { kind: 'notHeld' };
    // No success at all: untilAgreed resolved only once every master had answered.
    throw new QuorumError(k.name, 'release', this.quorum, errorVotes(replies as Reply<ReleaseResult>[]));
  }

  /**
   * Renewed where a majority renewed. A hold a majority renewed is put back on the
   * masters that answered "gone" (restarted empty): a majority confirmed it was still
   * ours, so this cannot bring back a hold that was deleted everywhere (a forceUnlock).
   */
  async renew(items: readonly RenewItem[], timeout: number): Promise<RenewOutcome[]> {
    const sentAt = now();
    const mark = this.ended.begin();
    const epochs = this.masters.map((m) => m.epoch);
    const perMaster = await Promise.all(this.all((m) => m.renew(items, timeout)));
    const broke = this.masters.map((m, j) => m.epoch !== epochs[j]);
    const putBack: RenewItem[][] = this.masters.map(() => []);
    const outcomes = items.map((item, i): RenewOutcome => {
      const tally = tallyRenewal(perMaster, i, this.quorum, broke);
      if (tally.outcome === 'gone') return { ok: false, reason: 'quorum' };
      if (tally.outcome === 'failed') return { ok: false, error: tally.error };
      // Only a lock hash is put back (restore.lua writes one); other primitives refuse quorum mode.
      if (tally.lostOn.length > 0 && !item.renewal && !this.ended.endedSince(item.keys.key, mark)) for (const j of tally.lostOn) putBack[j].push(item);
      return { ok: true, validUntil: sentAt + item.lease - this.drift(item.lease) };
    });
    this.ended.finish(mark);
    putBack.forEach((lost, j) => lost.length > 0 && restoreHolds(this.masters[j], lost));
    return outcomes;
  }

  async forceUnlock(k: LockKeys, timeout: number): Promise<boolean> {
    this.ended.end(k.key);
    const replies = await Promise.all(this.all((m) => m.forceUnlock(k, timeout)));
    if (replies.every((r) => !r.ok)) throw new QuorumError(k.name, 'forceUnlock', this.quorum, errorVotes(replies));
    return replies.some((r) => r.ok && r.value);
  }

  /** Asks on every master that answers; the distinct owners asked (one hold is on several masters). */
  async requestRelease(k: LockKeys, timeout: number): Promise<string[]> {
    const replies = await Promise.all(this.all((m) => m.requestRelease(k, timeout)));
    if (replies.every((r) => !r.ok)) throw new QuorumError(k.name, 'requestRelease', this.quorum, errorVotes(replies));
    return [...new Set(replies.flatMap((r) => (r.ok ? r.value : [])))];
  }

  async isLocked(k: LockKeys, timeout: number): Promise<boolean> {
    return majorityValue(await Promise.all(this.all((m) => m.isLocked(k, timeout).then(Number))), this.quorum, k.name, 'check') === 1;
  }

  async holdCount(k: LockKeys, owner: string, timeout: number): Promise<number> {
    return majorityValue(await Promise.all(this.all((m) => m.holdCount(k, owner, timeout))), this.quorum, k.name, 'count holds of');
  }

  async pttl(k: LockKeys, timeout: number): Promise<number> {
    return majorityValue(await Promise.all(this.all((m) => m.pttl(k, timeout))), this.quorum, k.name, 'read the TTL of');
  }

  async inspect(k: LockKeys, timeout: number): Promise<LockState> {
    return majorityState(await Promise.all(this.all((m) => m.inspect(k, timeout))), this.quorum, k.name);
  }

  /** Subscribes on every master; resolves once a majority is (see subscribeMajority). */
  subscribe(channel: string, listener: (message: string | undefined) => void, plain?: boolean): Promise<void> {
    const givenBack = new Set<number>();
    this.givenBack.set(channel, givenBack);
    return subscribeMajority(this.masters, this.quorum, channel, listener, givenBack, plain);
  }

  async unsubscribe(channel: string): Promise<void> {
    this.givenBack.delete(channel);
    await Promise.all(this.masters.map((m) => m.unsubscribe(channel)));
  }

  async dropSubscriptions(): Promise<void> {
    await Promise.all(this.masters.map((m) => m.dropSubscriptions()));
  }

  async close(): Promise<void> {
    await Promise.all(this.masters.map((m) => m.close()));
  }
}
