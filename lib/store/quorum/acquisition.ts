import { QuorumError } from '../../errors/QuorumError.js';
import { LockError } from '../../errors/LockError.js';
import type { MasterStore as Master } from '../master/master.js';
import type { AcquireResult, LockKeys } from '../types.js';
import { WAIT, decide, floorHolds, lateVote, unavailable, type Ballot, type Decision } from './decision.js';
import type { SitOut } from './restarts.js';
import { settledWithin } from '../../util/timeout.js';

const now = () => performance.now();

/** The vote of a master known to be down, without a call. */
export const DOWN = new LockError('master is down (ioredis is reconnecting)');

/**
 * One quorum acquisition (QuorumStore.acquire): the acquire sent to every master, each
 * answer a vote (decision.ts decides), a grant returned at a majority with its token's
 * floor raised on the masters that answered, the grants of a failed attempt given back
 * before it settles.
 */
export class QuorumAcquisition {
  constructor(
    private readonly masters: readonly Master[],
    private readonly quorum: number,
    /** Which masters sit out after a restart. */
    private readonly sitOut: SitOut,
    /** Redlock's drift of a lease (QuorumStore.drift). */
    private readonly drift: (lease: number) => number,
    /**
     * Per subscribed channel (QuorumStore.subscribe adds and removes them): the masters
     * whose grants this client gave back after its last failed acquire.
     */
    private readonly givenBack: ReadonlyMap<string, Set<number>>,
    /** Background trouble with no caller to reject (a give-back that failed). */
    private readonly onError: (error: Error) => void,
  ) {}

  /**
   * Sends the acquire to every master and feeds each answer to decide() (see
   * decision.ts), then does what it decided. One callback per master's answer.
   */
  attempt(k: LockKeys, owner: string, lease: number, timeout: number, held: number): Promise<AcquireResult> {
    const start = now();
    const drift = this.drift(lease);
    const votes: (Ballot | undefined)[] = new Array(this.masters.length);
    return new Promise<AcquireResult>((resolve, reject) => {
      /** 'wait' and 'grace' until decided; then the grant or failure, which late answers follow. */
      let decision: Decision = WAIT;
      let grace: NodeJS.Timeout | undefined;
      // A failure settles only once every master has answered (each within `timeout`)
      // and each grant among the answers has been given back (within `timeout` too):
      // the caller's next call finds none of this attempt's grants (DESIGN, Waiting v3).
      // A grant settles at the majority: nothing is left to undo then.
      let unanswered = this.masters.length;
      let allAnswered: () => void = () => undefined;
      const answered = new Promise<void>((resolve) => (allAnswered = resolve));
      const undos: Promise<void>[] = [];
      const giveBack = (i: number) => {
        undos.push(this.undo(i, k, owner, timeout));
        this.givenBack.get(k.channel)?.add(i);
      };
      const settle = (d: Decision & { action: 'grant' | 'fail' }): void => {
        decision = d;
        this.givenBack.get(k.channel)?.clear();
        if (d.action === 'grant') {
          // Fewer than a majority known at >= the token: handing it out could let a
          // later majority mint a smaller one.
          const floored = (raised: number) =>
            floorHolds(d, raised, this.quorum) ? resolve({ granted: true, token: d.token, validUntil: start + lease - drift }) : settle(unavailable(votes));
          if (d.raise.length === 0) floored(0);
          else void this.raiseFloors(k, d.raise, d.token, timeout).then(floored);
          return;
        }
        for (const i of d.giveBack) giveBack(i);
        // Late grants are given back as they come (vote); undos then holds them all.
        void answered
          .then(() => Promise.all(undos))
          .then(() => {
            if (d.reason === 'unavailable') reject(new QuorumError(k.name, 'acquire', this.quorum, d.votes));
            // 'expired' (a majority granted too late) is retried like a held lock.
            else resolve({ granted: false, pttl: d.pttl });
          });
      };
      const next = (graceOver: boolean) => {
        const d = decide({ votes, quorum: this.quorum, elapsed: now() - start, lease, drift, graceOver });
        if (d.action === 'wait') return;
        if (d.action === 'grace') {
          grace ??= setTimeout(() => decision.action === 'grace' && next(true), d.ms);
          decision = d;
          return;
        }
        clearTimeout(grace);
        settle(d);
      };
      const vote = (i: number, v: Ballot) => {
        votes[i] = v;
        if (decision.action === 'wait' || decision.action === 'grace') next(false);
        else {
          const late = lateVote(decision, v);
          if (late === 'giveBack') giveBack(i);
          else if (late === 'raiseFloor' && decision.action === 'grant') this.masters[i].fenceFloor(k, decision.token, timeout).catch(() => undefined);
        }
        // After the vote is acted on: a failure decided by this very vote still gives it back first.
        if (--unanswered === 0) allAnswered();
      };
      // Sends master i the acquire, within what is left of one command bound; returns
      // the vote instead when it is known without a call.
      const ask = (i: number): Ballot | undefined => {
        const m = this.masters[i];
        if (m.down) return { outcome: 'error', error: DOWN };
        const wait = this.sitOut.left(i);
        if (wait > 0) return { outcome: 'error', error: new LockError(`master restarted: it sits out for ${Math.ceil(wait)} ms more (one lease), so it cannot grant what it forgot`) };
        const epoch = m.epoch;
        m.acquire(k, owner, lease, Math.max(1, start + timeout - now()), held).then(
          (result) => vote(i, this.ballot(i, result, epoch, k, owner, timeout, undos)),
          (error: Error) => vote(i, { outcome: 'error', error }),
        );
        return undefined;
      };
      // Answers known without a call are fed once every call is out, like the calls' answers.
      const immediate: [number, Ballot][] = [];
      this.masters.forEach((m, i) => {
        // Checking whether it restarted (its connection came back): asked once the check
        // answers, within the same bound. A new server then sits out; the same one votes.
        const checked = m.down ? undefined : this.sitOut.checked(i);
        if (checked) {
          void settledWithin(checked, timeout).then(() => {
            const known = ask(i);
            if (known) vote(i, known);
          });
          return;
        }
        const known = ask(i);
        if (known) immediate.push([i, known]);
      });
      for (const [i, v] of immediate) vote(i, v);
    });
  }

  /** A master's answer as a vote. */
  private ballot(i: number, result: AcquireResult, epoch: number, k: LockKeys, owner: string, timeout: number, undos: Promise<void>[]): Ballot {
    if (!result.granted) return { outcome: 'held', pttl: result.pttl, counter: result.counter };
    const m = this.masters[i];
    // The connection broke while the call was out: ioredis may have resent it to a
    // master restarted empty, whose grant ignores holds it forgot (chaos: an overlap).
    if (m.epoch !== epoch || this.sitOut.left(i) > 0) {
      undos.push(this.undo(i, k, owner, timeout));
      return { outcome: 'error', error: new LockError('the connection to this master broke while the acquire was out, so its grant may come from a restarted server: not counted') };
    }
    return { outcome: 'granted', token: result.token };
  }

  /** Raises the floor of the given masters to token; resolves with how many succeeded. */
  private async raiseFloors(k: LockKeys, masters: readonly number[], token: number, timeout: number): Promise<number> {
    let raised = 0;
    await Promise.all(
      masters.map((i) =>
        this.masters[i].fenceFloor(k, token, timeout).then(
          () => void (raised += 1),
          () => undefined,
        ),
      ),
    );
    return raised;
  }

  /**
   * Gives back one master's grant of an attempt that is not used, passing the levels
   * Redis counts with it (the client's + 1, as MasterStore.giveBack); never rejects: a failure goes to
   * `error` (the grant expires with its lease).
   */
  private undo(master: number, k: LockKeys, owner: string, timeout: number): Promise<void> {
    const m = this.masters[master];
    return m.release(k, owner, timeout, m.levels.levelsOf(k.id, owner) + 1).then(
      () => undefined,
      (error: unknown) => this.onError(new LockError(`could not give back a grant of '${k.name}' on master ${master}; it expires with its lease`, { cause: error, lockName: k.name })),
    );
  }
}
