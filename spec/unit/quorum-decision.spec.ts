import { asVotes, decide, floorHolds, lateVote, type Ballot, type Decision, type Tally } from '../../lib/store/quorum/decision';

// Quorum acquisition's decision as a pure function of the votes (no Redis): the tables
// below are the rules; spec/integration/quorum.spec.ts runs them on real servers.

const LEASE = 1_000;
const DRIFT = 62; // as Quorum computes it for this lease: 1% + 2 ms + 50 ms for late timers

const g = (token: number): Ballot => ({ outcome: 'granted', token });
const h = (pttl: number, counter?: number): Ballot => ({ outcome: 'held', pttl, counter });
const e: Ballot = { outcome: 'error', error: new Error('down') };
const _ = undefined;

function tally(votes: (Ballot | undefined)[], over: Partial<Tally> = {}): Tally {
  return { votes, quorum: Math.floor(votes.length / 2) + 1, elapsed: 10, lease: LEASE, drift: DRIFT, graceOver: false, ...over };
}

/** The decision without the parts a table row does not state. */
function summary(d: Decision): unknown {
  switch (d.action) {
    case 'wait':
      return 'wait';
    case 'grace':
      return `grace ${d.ms}`;
    case 'grant':
      return { grant: d.token, raise: d.raise, atFloor: d.atFloor };
    default:
      return { fail: d.reason, giveBack: d.giveBack, ...(d.reason === 'unavailable' ? {} : { pttl: d.pttl }) };
  }
}

describe('decide(): 3 masters', () => {
  it.each<[string, (Ballot | undefined)[], unknown]>([
    ['nothing yet', [_, _, _], 'wait'],
    ['one grant', [g(1), _, _], 'wait'],
    ['one grant, one held', [g(1), h(300, 0), _], 'wait'],
    ['one grant, one error', [g(1), e, _], 'wait'],
    ['every master granted: no grace', [g(1), g(1), g(1)], { grant: 1, raise: [], atFloor: 3 }],
    ['a majority granted, the last held: no grace', [g(1), g(1), h(300, 0)], { grant: 1, raise: [2], atFloor: 2 }],
    ['a majority granted, the last failed: no grace', [g(1), g(1), e], { grant: 1, raise: [], atFloor: 2 }],
    ['a majority granted early, one token: no grace', [g(1), g(1), _], { grant: 1, raise: [], atFloor: 2 }],
    ['a majority granted early, tokens differ: grace for the third', [g(1), g(2), _], 'grace 10'],
    ['a majority held', [h(300, 4), h(200, 4), _], { fail: 'held', pttl: 200, giveBack: [] }],
    ['held and one grant: the grant is given back', [g(1), h(300, 4), h(700, 4)], { fail: 'held', pttl: 300, giveBack: [0] }],
    ['held and an error: held (one error is within the minority)', [g(1), h(300, 4), e], { fail: 'held', pttl: 300, giveBack: [0] }],
    ['long holds: retry within a second', [h(5_000, 4), h(9_000, 4), _], { fail: 'held', pttl: 1_000, giveBack: [] }],
    ['too many errors', [e, e, _], { fail: 'unavailable', giveBack: [] }],
    ['too many errors, one grant', [g(1), e, e], { fail: 'unavailable', giveBack: [0] }],
  ])('%s', (_name, votes, expected) => {
    expect(summary(decide(tally(votes)))).toEqual(expected);
  });
});

describe('decide(): 5 masters', () => {
  it.each<[string, (Ballot | undefined)[], unknown]>([
    ['two grants', [g(1), g(1), _, _, _], 'wait'],
    ['two grants, two failures: the fifth decides', [g(1), g(1), h(100, 0), e, _], 'wait'],
    ['three grants early, one token: no grace', [g(1), g(1), g(1), _, _], { grant: 1, raise: [], atFloor: 3 }],
    ['three grants early, tokens differ: grace', [g(1), g(1), g(2), _, _], 'grace 10'],
    ['three grants and a refusal early: grace', [g(1), g(1), g(1), h(300, 0), _], 'grace 10'],
    ['three grants, everyone answered', [g(1), g(1), g(1), e, e], { grant: 1, raise: [], atFloor: 3 }],
    ['three held', [h(100, 2), h(50, 2), h(80, 2), _, _], { fail: 'held', pttl: 50, giveBack: [] }],
    ['two held and an error', [g(3), h(100, 2), h(80, 2), e, _], { fail: 'held', pttl: 80, giveBack: [0] }],
    ['three down', [e, e, e, _, _], { fail: 'unavailable', giveBack: [] }],
    ['three down, two grants late', [e, e, e, g(1), g(1)], { fail: 'unavailable', giveBack: [3, 4] }],
  ])('%s', (_name, votes, expected) => {
    expect(summary(decide(tally(votes)))).toEqual(expected);
  });
});

describe('decide(): the token', () => {
  it.each<[string, (Ballot | undefined)[], unknown]>([
    ['the largest granted token', [g(4), g(6), g(5)], { grant: 6, raise: [0, 2], atFloor: 1 }],
    ["above a held master's counter", [g(4), g(6), h(100, 9)], { grant: 10, raise: [0, 1, 2], atFloor: 0 }],
    ['a held counter below the grants changes nothing', [g(7), g(7), h(100, 3)], { grant: 7, raise: [2], atFloor: 2 }],
    ['a held master without a counter counts for nothing', [g(2), g(2), h(100)], { grant: 2, raise: [], atFloor: 2 }],
    ['5 masters: restarted masters granted, stale holders ahead', [g(1), g(1), g(1), h(400, 12), h(400, 11)], { grant: 13, raise: [0, 1, 2, 3, 4], atFloor: 0 }],
  ])('%s', (_name, votes, expected) => {
    expect(summary(decide(tally(votes)))).toEqual(expected);
  });

  it('is chosen after the grace period from the masters that answered', () => {
    expect(summary(decide(tally([g(4), g(6), _], { graceOver: true })))).toEqual({ grant: 6, raise: [0], atFloor: 1 });
  });
});

describe('decide(): grace and validity', () => {
  it.each<[string, number, number]>([
    // elapsed -> grace ms: as long as the majority took, at least 2 ms, at most a tenth of the lease.
    ['a fast majority', 0.4, 2],
    ['a majority in 10 ms', 10, 10],
    ['a slow majority', 600, LEASE / 10],
  ])('grace for %s', (_name, elapsed, ms) => {
    expect(decide(tally([g(1), g(2), _], { elapsed }))).toEqual({ action: 'grace', ms });
  });

  it('grants with the lease left after elapsed time and drift', () => {
    expect(decide(tally([g(1), g(1), g(1)], { elapsed: 100 }))).toMatchObject({ action: 'grant', validity: LEASE - 100 - DRIFT });
  });

  it.each<[string, (Ballot | undefined)[], Partial<Tally>, number]>([
    // The pttl to retry after: the held master's, or a second.
    ['every master answered too late', [g(1), g(1), h(250, 0)], { elapsed: LEASE - DRIFT }, 250],
    ['the grace period ended too late', [g(1), g(1), _], { elapsed: LEASE, graceOver: true }, 1_000],
  ])('fails when validity ran out: %s', (_name, votes, over, pttl) => {
    expect(summary(decide(tally(votes, over)))).toEqual({ fail: 'expired', pttl, giveBack: [0, 1] });
  });
});

describe('lateVote(): an answer after the decision', () => {
  const failed = decide(tally([h(100, 1), h(100, 1), _]));
  const granted = decide(tally([g(5), g(5), _], { graceOver: true }));

  it.each<[string, Decision, Ballot, string]>([
    ['a grant to a failed attempt is given back', failed, g(2), 'giveBack'],
    ['a held answer to a failed attempt', failed, h(100, 1), 'nothing'],
    ['an error to a failed attempt', failed, e, 'nothing'],
    ['a grant below the token: floor raised', granted, g(3), 'raiseFloor'],
    ['a grant at the token', granted, g(5), 'nothing'],
    ['a held counter below the token: floor raised', granted, h(100, 4), 'raiseFloor'],
    ['a held counter above the token', granted, h(100, 8), 'nothing'],
    ['an error to a granted attempt', granted, e, 'nothing'],
  ])('%s', (_name, decision, vote, expected) => {
    expect(lateVote(decision, vote)).toBe(expected);
  });
});

describe('floorHolds(): the grant stands only when a majority is at the token', () => {
  it.each<[number, number, number, boolean]>([
    // atFloor, raised, quorum -> holds
    [3, 0, 2, true],
    [1, 1, 2, true],
    [1, 0, 2, false],
    [0, 2, 3, false],
    [0, 3, 3, true],
  ])('atFloor %i + raised %i of quorum %i: %s', (atFloor, raised, quorum, holds) => {
    expect(floorHolds({ atFloor }, raised, quorum)).toBe(holds);
  });
});

it('reports a master that had not answered as an error in the votes', () => {
  const votes = asVotes([g(3), h(100, 2), e, _]);
  expect(votes.map((v) => [v.master, v.outcome])).toEqual([
    [0, 'granted'],
    [1, 'held'],
    [2, 'error'],
    [3, 'error'],
  ]);
  expect(votes[3]).toMatchObject({ error: { message: 'no reply before the outcome was decided' } });
  expect(votes[1]).toEqual({ master: 1, outcome: 'held', pttl: 100 });
});
