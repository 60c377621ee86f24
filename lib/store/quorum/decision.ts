import type { Vote } from '../../errors/QuorumError.js';
import { LockError } from '../../errors/LockError.js';

/**
 * Quorum acquisition's decision, as a pure function of the votes so far: no Redis, no
 * timers, no promises. The Quorum class sends the calls, feeds each answer in, and
 * carries out what comes back (give-backs, floor raises, resolve or reject).
 */

/** What one master answered an acquire; `undefined` in a tally while it has not answered. */
export type Ballot =
  | { readonly outcome: 'granted'; readonly token: number }
  /** `counter`: the master's fencing counter, so the token can be chosen above it. */
  | { readonly outcome: 'held'; readonly pttl: number; readonly counter?: number }
  | { readonly outcome: 'error'; readonly error: Error };

export interface Tally {
  /** Per master (index = master), its answer or undefined while pending. */
  readonly votes: readonly (Ballot | undefined)[];
  /** floor(N/2)+1. */
  readonly quorum: number;
  /** Milliseconds since the acquire was sent. */
  readonly elapsed: number;
  readonly lease: number;
  /** Redlock's clock drift allowance for this lease (see Quorum.drift). */
  readonly drift: number;
  /** The grace period for trailing masters (see 'grace') has run out. */
  readonly graceOver: boolean;
}

export type Decision =
  /** Neither a majority granted nor a majority is out of reach yet. */
  | { readonly action: 'wait' }
  /**
   * A majority granted, some masters have not answered, and the answers so far are not
   * all grants of one token: wait `ms` for the rest (then decide with graceOver), or
   * until every master answered. A master still holding a stale grant of someone else's
   * may be ahead of the granting ones in its counter, and its answer may trail the
   * majority (a restarted master answers after NOSCRIPT and a second round trip): the
   * token must exceed what it reports.
   * No grace when every answer so far is a grant of the same token (the steady state:
   * counters stay equal once raised to a common floor): the token already exceeds
   * every token handed out before, because any earlier grant's majority shares a master
   * with this one, which minted above it (see QuorumStore). A trailing answer is then
   * handled as a late vote, as after a grace. Redlock decides at the majority too.
   */
  | { readonly action: 'grace'; readonly ms: number }
  /**
   * Held, provided a majority is known to be at >= token: `atFloor` masters already
   * are, and the masters in `raise` answered below it (raise their floor to token).
   * `validity`: ms of the lease left now, after drift.
   */
  | { readonly action: 'grant'; readonly token: number; readonly validity: number; readonly raise: readonly number[]; readonly atFloor: number }
  | Failure;

/** Not held. Every master in `giveBack` granted and must be given back. */
export type Failure =
  /** Held by another owner: retry after `pttl` (the smallest one reported, at most 1 s). */
  | { readonly action: 'fail'; readonly reason: 'held'; readonly pttl: number; readonly giveBack: readonly number[] }
  /** Too many masters could not answer: a QuorumError with these votes. */
  | { readonly action: 'fail'; readonly reason: 'unavailable'; readonly votes: readonly Vote[]; readonly giveBack: readonly number[] }
  /** A majority granted, but too late: nothing of the lease is left after drift. */
  | { readonly action: 'fail'; readonly reason: 'expired'; readonly pttl: number; readonly giveBack: readonly number[] };

export const WAIT: Decision = { action: 'wait' };

/** What the tally says to do now. */
export function decide(t: Tally): Decision {
  const size = t.votes.length;
  let granted = 0;
  let held = 0;
  let errors = 0;
  for (const v of t.votes) {
    if (v === undefined) continue;
    if (v.outcome === 'granted') granted += 1;
    else if (v.outcome === 'held') held += 1;
    else errors += 1;
  }
  if (granted >= t.quorum) {
    if (granted + held + errors < size && !t.graceOver && !agreeing(t.votes)) return { action: 'grace', ms: Math.max(2, Math.min(t.elapsed, t.lease / 10)) };
    const validity = t.lease - t.elapsed - t.drift;
    if (validity <= 0) return { action: 'fail', reason: 'expired', pttl: retryAfter(t.votes), giveBack: granting(t.votes) };
    return grant(t.votes, validity);
  }
  // Fewer than a majority can still grant.
  if (held + errors > size - t.quorum) return errors > size - t.quorum ? unavailable(t.votes) : { action: 'fail', reason: 'held', pttl: retryAfter(t.votes), giveBack: granting(t.votes) };
  return WAIT;
}

/**
 * The token: above every token a master that answered has minted, granted or not
 * (a master still holding a stale grant may be ahead of restarted granting ones).
 */
function grant(votes: readonly (Ballot | undefined)[], validity: number): Decision {
  let token = 0;
  for (const v of votes) {
    const c = counter(v);
    if (c !== undefined) token = Math.max(token, v!.outcome === 'granted' ? c : c + 1);
  }
  const raise: number[] = [];
  let atFloor = 0;
  votes.forEach((v, i) => {
    const c = counter(v);
    if (c === undefined) return;
    if (c >= token) atFloor += 1;
    else raise.push(i);
  });
  return { action: 'grant', token, validity, raise, atFloor };
}

/** Every master that answered granted, all with the same token. */
function agreeing(votes: readonly (Ballot | undefined)[]): boolean {
  let token: number | undefined;
  for (const v of votes) {
    if (v === undefined) continue;
    if (v.outcome !== 'granted' || (token !== undefined && v.token !== token)) return false;
    token = v.token;
  }
  return true;
}

/** The master's fencing counter as its answer tells it: its token if it granted. */
export function counter(v: Ballot | undefined): number | undefined {
  if (v?.outcome === 'granted') return v.token;
  if (v?.outcome === 'held') return v.counter;
  return undefined;
}

/** Too few masters answered: a QuorumError's votes, and every grant given back. */
export function unavailable(votes: readonly (Ballot | undefined)[]): Failure {
  return { action: 'fail', reason: 'unavailable', votes: asVotes(votes), giveBack: granting(votes) };
}

/**
 * What to do with a vote that arrives after the decision: a grant to an attempt that
 * failed is given back; a master that answered an attempt that was granted is raised
 * to the token handed out when its counter is below it.
 */
export function lateVote(decision: Decision, vote: Ballot): 'giveBack' | 'raiseFloor' | 'nothing' {
  if (decision.action === 'fail') return vote.outcome === 'granted' ? 'giveBack' : 'nothing';
  if (decision.action === 'grant') {
    const c = counter(vote);
    return c !== undefined && c < decision.token ? 'raiseFloor' : 'nothing';
  }
  return 'nothing';
}

/** How many masters are at >= the token after `raised` of the `raise` list succeeded: the grant stands at quorum. */
export function floorHolds(decision: { readonly atFloor: number }, raised: number, quorum: number): boolean {
  return decision.atFloor + raised >= quorum;
}

function granting(votes: readonly (Ballot | undefined)[]): number[] {
  const out: number[] = [];
  votes.forEach((v, i) => v?.outcome === 'granted' && out.push(i));
  return out;
}

/** The smallest pttl another owner's hold reports, at most 1 s: when to try again. */
function retryAfter(votes: readonly (Ballot | undefined)[]): number {
  let pttl = 1_000;
  for (const v of votes) if (v?.outcome === 'held') pttl = Math.min(pttl, v.pttl);
  return pttl;
}

/** The votes as a QuorumError reports them; a master that had not answered is an error. */
export function asVotes(votes: readonly (Ballot | undefined)[]): Vote[] {
  return Array.from(votes, (v, master): Vote => {
    if (v === undefined) return { master, outcome: 'error', error: new LockError('no reply before the outcome was decided') };
    if (v.outcome === 'granted') return { master, outcome: 'granted', token: v.token };
    if (v.outcome === 'held') return { master, outcome: 'held', pttl: v.pttl };
    return { master, outcome: 'error', error: v.error };
  });
}
