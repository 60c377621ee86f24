import { QuorumError, type Vote } from '../../errors/QuorumError.js';
import { LockError } from '../../errors/LockError.js';
import { withTimeout } from '../../util/timeout.js';
import { lagAllowance } from '../lease-margin.js';
import type { MasterStore as Master } from '../master/master.js';
import type { AcquireResult, LockKeys, ReleaseResult, RenewItem, RenewOutcome, Store } from '../types.js';

const now = () => performance.now();

type Reply<T> = { ok: true; value: T } | { ok: false; error: Error };

const DOWN = new LockError('master is down (ioredis is reconnecting)');

/**
 * N independent masters (the Redlock algorithm on Redisson's data model): every call
 * goes to all masters in parallel and needs floor(N/2)+1 of them.
 *
 * Fencing tokens across majorities. Each master mints tokens from its own counter;
 * an acquisition returns the maximum T its granting majority minted, after raising
 * every master that answered (granted or not) to at least T ("floor"), and it only
 * succeeds when a majority of masters is known to be at >= T. The next acquisition's
 * majority intersects that majority, and an intersecting master mints > T, so its
 * maximum exceeds T. A master restarted empty mints a low token, but it is not alone
 * in any majority with fewer than a minority of faults, and the next acquisition it
 * answers raises it again, so rolling restarts (one at a time, with an acquisition in
 * between) never make tokens go backwards.
 */
export class QuorumStore implements Store {
  readonly size: number;
  readonly quorum: number;

  /** Smoothed round trip of the slowest master a majority needs (sizes the no-barging window). */
  get rtt(): number {
    return Math.max(...this.masters.map((m) => m.rtt));
  }

  constructor(
    readonly masters: readonly Master[],
    private readonly driftFactor: number,
    /** The longest lease a restarted master must sit out (the client's watchdogTimeout). */
    private readonly sitOut: number,
  ) {
    this.size = masters.length;
    this.quorum = Math.floor(masters.length / 2) + 1;
    for (const m of masters) m.watchRestarts(sitOut);
  }

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

  /** Resolved once every master's age is known (or could not be): then youngMasters() can judge. */
  private ages: Promise<void> | undefined;

  acquire(k: LockKeys, owner: string, lease: number, timeout: number, held: number): Promise<AcquireResult> {
    // A client's first acquisition waits for the masters' ages, bounded: a client started
    // just after a restart must already keep the young master out.
    this.ages ??= withTimeout(Promise.all(this.masters.filter((m) => !m.down).map((m) => m.restarts?.known)), 500, 'INFO').then(
      () => undefined,
      () => undefined,
    );
    return this.ages.then(() => this.acquireNow(k, owner, lease, timeout, held));
  }

  private acquireNow(k: LockKeys, owner: string, lease: number, timeout: number, held: number): Promise<AcquireResult> {
    const start = now();
    const replies = this.all((m) => {
      const wait = this.sitOutLeft(m);
      if (wait > 0) return Promise.reject(new LockError(`master restarted: it sits out for ${Math.ceil(wait)} ms more (one lease), so it cannot grant what it forgot`));
      const epoch = m.epoch;
      return m.acquire(k, owner, lease, timeout, held).then((result) => {
        // The connection broke while the call was out: ioredis may have resent it to a
        // master restarted empty, whose grant ignores holds it forgot (chaos: an overlap).
        if (result.granted && (m.epoch !== epoch || this.sitOutLeft(m) > 0)) {
          this.undo(this.masters.indexOf(m), k, owner);
          throw new LockError('the connection to this master broke while the acquire was out, so its grant may come from a restarted server: not counted');
        }
        return result;
      });
    });
    return new Promise<AcquireResult>((resolve, reject) => {
      const votes: (Vote | undefined)[] = new Array(this.size);
      const counters: (number | undefined)[] = new Array(this.size);
      let decided: 'granting' | 'granted' | 'failed' | undefined;
      let granted = 0;
      let held = 0;
      let errors = 0;
      let finalToken = 0;
      const fail = () => {
        decided = 'failed';
        const back = this.givenBack.get(k.channel);
        back?.clear();
        votes.forEach((v, i) => {
          if (v?.outcome !== 'granted') return;
          this.undo(i, k, owner);
          back?.add(i);
        });
        const all = this.votes(votes);
        if (errors > this.size - this.quorum) reject(new QuorumError(k.name, 'acquire', this.quorum, all));
        else resolve({ granted: false, pttl: Math.min(1_000, ...all.flatMap((v) => (v.outcome === 'held' ? [v.pttl] : []))) });
      };
      let answered = 0;
      let graceTimer: NodeJS.Timeout | undefined;
      const grant = () => {
        if (decided !== 'granting') return;
        clearTimeout(graceTimer);
        decided = 'granted';
        this.givenBack.get(k.channel)?.clear();
        const validity = lease - (now() - start) - this.drift(lease);
        if (validity <= 0) {
          errors = 0;
          return fail();
        }
        // Above every token a master that answered has minted: a master still holding
        // a stale grant may be ahead of the (possibly restarted) granting ones.
        finalToken = Math.max(
          ...votes.flatMap((v) => (v?.outcome === 'granted' ? [v.token] : [])),
          ...votes.flatMap((v, i) => (v?.outcome === 'held' && counters[i] !== undefined ? [counters[i]! + 1] : [])),
        );
        this.raiseFloors(k, counters, finalToken, timeout).then(
          () => resolve({ granted: true, token: finalToken, validUntil: start + lease - this.drift(lease) }),
          () => {
            // Fewer than a majority is known to be at >= the token: handing it out
            // could let a later majority mint a smaller one.
            errors = this.size;
            fail();
          },
        );
      };
      replies.forEach((p, i) =>
        p.then((reply) => {
          answered += 1;
          if (reply.ok && reply.value.granted) {
            votes[i] = { master: i, outcome: 'granted', token: reply.value.token };
            counters[i] = reply.value.token;
            granted += 1;
          } else if (reply.ok && !reply.value.granted) {
            votes[i] = { master: i, outcome: 'held', pttl: reply.value.pttl };
            counters[i] = reply.value.counter;
            held += 1;
          } else {
            votes[i] = { master: i, outcome: 'error', error: (reply as { error: Error }).error };
            errors += 1;
          }
          if (decided === 'failed') {
            // Late: the decision went against us, give back what this master granted.
            if (votes[i]?.outcome === 'granted') {
              this.undo(i, k, owner);
              this.givenBack.get(k.channel)?.add(i);
            }
            return;
          }
          if (decided === 'granted') {
            // Late but ours: keep it, and lift this master's counter to the token given out.
            if (counters[i] !== undefined && counters[i]! < finalToken) this.masters[i].fenceFloor(k, finalToken, timeout).catch(() => undefined);
            return;
          }
          if (decided === 'granting') {
            if (answered === this.size) grant();
            return;
          }
          if (granted >= this.quorum) {
            // The token must exceed every counter a master still holding a stale grant
            // reports, and those replies may trail the granting majority (restarted
            // masters answer after NOSCRIPT and a second round trip): give the others a
            // moment, as long as the majority took, before choosing the token.
            decided = 'granting';
            if (answered === this.size) return grant();
            graceTimer = setTimeout(grant, Math.max(2, Math.min(now() - start, lease / 10)));
          } else if (held + errors > this.size - this.quorum) {
            fail();
          }
        }),
      );
    });
  }

  /**
   * Masters started less than one lease ago while a majority of masters is older: they
   * restarted under running clients (a whole deployment started together is not held
   * back). Returns each one's remaining sit-out.
   */
  private youngMasters(): Map<Master, number> {
    const t = now();
    const young = new Map<Master, number>();
    let old = 0;
    for (const m of this.masters) {
      const left = (m.restarts?.startedAt ?? -Infinity) + this.sitOut - t;
      if (left > 0) young.set(m, left);
      else old += 1;
    }
    return old >= this.quorum ? young : new Map();
  }

  /** Milliseconds master m still sits out after a restart (0: it votes). */
  private sitOutLeft(m: Master): number {
    return Math.max(m.restarts?.remaining ?? 0, this.youngMasters().get(m) ?? 0);
  }

  /** Raise every master that answered to at least token; resolves when a majority is known to be there. */
  private async raiseFloors(k: LockKeys, counters: readonly (number | undefined)[], token: number, timeout: number): Promise<void> {
    let atFloor = counters.filter((c) => c !== undefined && c >= token).length;
    const raises = counters.map((c, i) =>
      c !== undefined && c < token
        ? this.masters[i].fenceFloor(k, token, timeout).then(
            () => void (atFloor += 1),
            () => undefined,
          )
        : undefined,
    );
    await Promise.all(raises);
    if (atFloor < this.quorum) throw new Error('fence floor not on a majority');
  }

  private undo(master: number, k: LockKeys, owner: string): void {
    const m = this.masters[master];
    void m.giveBack(k, owner, false, 5_000, m.levelsNow(k.key, owner) + 1);
  }

  private votes(votes: readonly (Vote | undefined)[]): Vote[] {
    return Array.from(votes, (v, i) => v ?? { master: i, outcome: 'error', error: new LockError('no reply before the outcome was decided') });
  }

  /** Releases on every master. No hand-off in quorum mode: waiters retry on the release. */
  async release(k: LockKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult> {
    const replies = await Promise.all(this.all((m) => m.release(k, owner, timeout, held)));
    let count = 0;
    let released = 0;
    let notHeld = 0;
    for (const r of replies) {
      if (!r.ok) continue;
      if (r.value.kind === 'decremented') count = Math.max(count, r.value.count);
      else if (r.value.kind === 'released') released += 1;
      else if (r.value.kind === 'notHeld') notHeld += 1;
    }
    if (count > 0) return { kind: 'decremented', count };
    if (released > 0) return { kind: 'released', receivers: 0 };
    if (notHeld > 0) return { kind: 'notHeld' };
    throw new QuorumError(k.name, 'release', this.quorum, this.errorVotes(replies));
  }

  async renew(items: readonly RenewItem[], timeout: number): Promise<RenewOutcome[]> {
    const sentAt = now();
    const perMaster = await Promise.all(this.all((m) => m.renew(items, timeout)));
    return items.map((item, i) => {
      let ok = 0;
      let gone = 0;
      let error: Error | undefined;
      for (const reply of perMaster) {
        if (!reply.ok) error = reply.error;
        else {
          const o = reply.value[i];
          if (o.ok) ok += 1;
          else if ('reason' in o) gone += 1;
          else error = o.error;
        }
      }
      if (ok >= this.quorum) return { ok: true, validUntil: sentAt + item.lease - this.drift(item.lease) };
      if (gone > this.size - this.quorum) return { ok: false, reason: 'quorum' };
      return { ok: false, error: error ?? new LockError('renewal reached no majority') };
    });
  }

  async forceUnlock(k: LockKeys, timeout: number): Promise<boolean> {
    const replies = await Promise.all(this.all((m) => m.forceUnlock(k, timeout)));
    if (replies.every((r) => !r.ok)) throw new QuorumError(k.name, 'forceUnlock', this.quorum, this.errorVotes(replies));
    return replies.some((r) => r.ok && r.value);
  }

  /** A value a majority agrees is at least this: the quorum-th largest answer. */
  private async majority(name: string, action: string, replies: Promise<Reply<number>>[]): Promise<number> {
    const settled = await Promise.all(replies);
    const values = settled.flatMap((r) => (r.ok ? [r.value] : [])).sort((a, b) => b - a);
    if (values.length < this.quorum) throw new QuorumError(name, action, this.quorum, this.errorVotes(settled));
    return values[this.quorum - 1];
  }

  async isLocked(k: LockKeys, timeout: number): Promise<boolean> {
    return (await this.majority(k.name, 'check', this.all((m) => m.isLocked(k, timeout).then(Number)))) === 1;
  }

  holdCount(k: LockKeys, owner: string, timeout: number): Promise<number> {
    return this.majority(k.name, 'count holds of', this.all((m) => m.holdCount(k, owner, timeout)));
  }

  pttl(k: LockKeys, timeout: number): Promise<number> {
    return this.majority(k.name, 'read the TTL of', this.all((m) => m.pttl(k, timeout)));
  }

  /**
   * Subscribes on every master, but waits only for a majority: a release reaches at
   * least a majority of masters, and a master that is down (its subscriber connection
   * would time out) must not hold up the waiter's first retry.
   */
  subscribe(channel: string, listener: (message: string) => void): Promise<void> {
    const givenBack = new Set<number>();
    this.givenBack.set(channel, givenBack);
    return new Promise((resolve) => {
      let done = 0;
      const settled = () => {
        if (++done === this.quorum) resolve();
      };
      for (const [i, m] of this.masters.entries()) {
        // A master that is down cannot deliver a release: it does not hold up the
        // waiter's retries (its subscriber keeps trying on its own).
        const down = m.down;
        void m.subscribe(channel, (message) => givenBack.has(i) || listener(message)).then(() => down || settled());
        if (down) settled();
      }
    });
  }

  async unsubscribe(channel: string): Promise<void> {
    this.givenBack.delete(channel);
    await Promise.all(this.masters.map((m) => m.unsubscribe(channel)));
  }

  async close(): Promise<void> {
    await Promise.all(this.masters.map((m) => m.close()));
  }

  private errorVotes(replies: readonly Reply<unknown>[]): Vote[] {
    return replies.map((r, i) => (r.ok ? { master: i, outcome: 'granted', token: 0 } : { master: i, outcome: 'error', error: r.error }));
  }
}
