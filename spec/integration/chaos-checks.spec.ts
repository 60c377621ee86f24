/**
 * The chaos run's newer checks on hand-made histories, each shown able to fail: the
 * fenced register (register-check.ts), the waits' outcomes and budgets and writer
 * starvation (waits-check.ts), and the faults that excuse nothing (faults.ts).
 */
import { checkHistory, type Fault, type Hold, type LogRecord, type LoopGap } from '../kit/chaos/history';
import { explainsLossOf } from '../kit/chaos/faults';
import { checkRegister } from '../kit/chaos/register-check';
import { checkWaits } from '../kit/chaos/waits-check';
import { WAIT_SLACK } from '../kit/chaos/verdict';

const LEASE = 800;
let seq = 0;

function hold(p: Partial<Hold> & Pick<Hold, 'token' | 'start'>): Hold {
  return { id: `h${++seq}`, worker: 0, pid: 100, lock: 'main', end: p.start + 50, outcome: 'released', writes: [p.start], ...p };
}

describe('the fenced register', () => {
  // a held token 1 from 1_000; its lease lapsed and b took token 2 at 1_500 and wrote at once.
  const b = hold({ token: 2, start: 1_500, end: 1_700, worker: 1, pid: 101, registerWrites: [{ sent: 1_500, at: 1_502, ok: true }] });
  const a = (late: { sent: number; at: number; ok: boolean }) =>
    hold({ token: 1, start: 1_000, end: 1_650, lostAt: 1_640, outcome: 'lost', registerWrites: [{ sent: 1_000, at: 1_001, ok: true }, late] });

  it('counts a late write it refused as fenced off', () => {
    const r = checkRegister([a({ sent: 1_600, at: 1_601, ok: false }), b]);
    expect(r.violations).toEqual([]);
    expect(r).toMatchObject({ writes: 3, accepted: 2, fencedOffLate: 1 });
  });

  it("accepts a stale holder's write that lands before its successor's first (a serial order), and counts it", () => {
    const early = hold({ token: 2, start: 1_500, end: 1_700, worker: 1, pid: 101, registerWrites: [{ sent: 1_520, at: 1_522, ok: true }] });
    const r = checkRegister([a({ sent: 1_505, at: 1_506, ok: true }), early]);
    expect(r.violations).toEqual([]);
    expect(r.acceptedBeforeSuccessorWrote).toBe(1);
  });

  it("catches a write it accepted after a successor's acknowledged one (tokens went backwards)", () => {
    const r = checkRegister([a({ sent: 1_600, at: 1_601, ok: true }), b]);
    expect(r.violations.map((v) => v.kind)).toEqual(['register']);
    expect(r.violations[0]!.message).toMatch(/accepted h\d+'s write \(token 1\) sent at 1600/);
  });

  it('catches a refused write of a holder nobody followed', () => {
    const alone = hold({ token: 3, start: 2_000, registerWrites: [{ sent: 2_000, at: 2_001, ok: false }] });
    expect(checkRegister([alone]).violations.map((v) => v.kind)).toEqual(['register']);
  });

  it("leaves readers and semaphore holders out (they write nothing)", () => {
    const reader = hold({ token: 0, start: 2_000, side: 'read', registerWrites: [{ sent: 2_000, at: 2_001, ok: false }] });
    expect(checkRegister([reader]).writes).toBe(0);
  });
});

describe('the waits', () => {
  type Wait = Extract<LogRecord, { type: 'wait' }>;
  const BOUND = Math.floor(LEASE / 3);
  const wait = (p: Partial<Wait>): Wait => ({ type: 'wait', worker: 0, pid: 100, kind: 'lock', lock: 'main', start: 1_000, at: 1_200, budget: 1_500, bound: BOUND, outcome: 'held', ...p });
  const check = (records: LogRecord[], faults: Fault[] = [], loopGaps: LoopGap[] = []) => checkWaits(records, { slack: WAIT_SLACK, faults, loopGaps, starvedAfterMs: 10 * LEASE });

  it('accepts the outcomes the contract allows, and reports the worst overrun', () => {
    const r = check([wait({}), wait({ outcome: 'timeout', at: 2_600 }), wait({ outcome: 'unavailable', at: 2_000 })]);
    expect(r.violations).toEqual([]);
    expect(r.byOutcome).toEqual({ held: 1, timeout: 1, unavailable: 1, other: 0 });
    expect(r.worstOverBudgetMs).toBe(100);
  });

  it('catches a wait that rejected with another error (a multi-lock wait rejected with LockLostError)', () => {
    const r = check([wait({ kind: 'multi', lock: 'main+aux-1', outcome: 'other', error: 'LockLostError: lock main lost (expired)', at: 2_000 })]);
    expect(r.violations.map((v) => v.kind)).toEqual(['wait']);
    expect(r.violations[0]!.message).toMatch(/LockLostError.*not an outcome the contract allows/);
  });

  it('catches a wait that outlived its budget, unless its process was stopped meanwhile', () => {
    const long = wait({ outcome: 'timeout', at: 1_000 + 1_500 + 2_200 });
    expect(check([long]).violations.map((v) => v.kind)).toEqual(['wait']);
    const pause: Fault = { kind: 'pause', worker: 0, pid: 100, begin: 1_200, end: 3_000 };
    expect(check([long], [pause]).violations).toEqual([]);
  });

  it('holds a wait to its budget plus one command bound (its own, logged with it), less what its process could not run', () => {
    const end = 1_000 + 1_500 + BOUND;
    const within = wait({ outcome: 'timeout', at: end + WAIT_SLACK });
    const r = check([within]);
    expect(r.violations).toEqual([]);
    expect(r.worstPastBoundMs).toBe(WAIT_SLACK);
    // A second past its bound: the overrun of a wait that waited on its subscription (2 s) or on another wait of its client.
    const late = wait({ outcome: 'timeout', at: end + 1_000 });
    expect(check([late]).violations.map((v) => v.message)).toEqual([expect.stringMatching(/1000 ms past the budget plus one command bound \(266 ms\)/)]);
    // A longer bound (a fixed lease of 2.4 s: 800 ms) allows more.
    expect(check([wait({ outcome: 'timeout', at: end + 600, bound: 800 })]).violations).toEqual([]);
    // Its process ran nothing for 950 ms meanwhile (a loaded machine): its timers ran that late.
    const gap: LoopGap = { pid: 100, from: 1_500, to: 2_450 };
    expect(check([late], [], [gap]).violations).toEqual([]);
    expect(check([late], [], [{ ...gap, pid: 101 }]).violations).toHaveLength(1);
  });

  it('catches writers starved by readers, not writers that get in now and then, nor a burst of timeouts during one fault', () => {
    // Writer waits of 1.5 s timing out one after another for 11 s: nobody wrote.
    const timeouts = [0, 1, 2, 3, 4, 5, 6].map((i) => wait({ kind: 'write', outcome: 'timeout', start: 1_000 + i * 1_600, at: 2_500 + i * 1_600, pid: 100 + i }));
    // A reader of another process that came 300 ms after a waiting writer got in before that writer's deadline: starved.
    const passing = wait({ kind: 'read', start: 5_900, at: 5_950, pid: 200 });
    expect(check([...timeouts, passing]).violations.map((v) => v.kind)).toEqual(['wait']);
    // No reader passed them (those holding came first, their sections longer than the writers' budgets): not the lock's doing.
    expect(check(timeouts).violations).toEqual([]);
    // Nor one passing a writer whose connections were slowed then (a latency fault on its
    // worker): the writer's place reached Redis late, maybe after the reader's.
    const latency: Fault = { kind: 'latency', worker: 0, begin: 5_500, end: 6_500 };
    expect(check([...timeouts, passing], [latency]).violations).toEqual([]);
    expect(check([...timeouts, passing], [{ ...latency, worker: 1 }]).violations.map((v) => v.kind)).toEqual(['wait']);
    // Nor a reader let in by a writer's leave at its deadline (5 800 + 1 500).
    expect(check([...timeouts, wait({ kind: 'read', start: 5_900, at: 7_302, pid: 200 })]).violations).toEqual([]);
    const oneGotIn = [...timeouts.slice(0, 3), wait({ kind: 'write', start: 5_000, at: 5_500 }), ...timeouts.slice(3), passing];
    const r = check(oneGotIn);
    expect(r.violations).toEqual([]);
    expect(r.writers).toEqual({ held: 1, timedOut: 7 });
    // Five writers waiting at once through one stall: five timeouts, 1.6 s, no starvation.
    const burst = [0, 1, 2, 3, 4].map((i) => wait({ kind: 'write', outcome: 'timeout', start: 1_000 + i * 20, at: 2_500 + i * 20, pid: 100 + i }));
    expect(check(burst).violations).toEqual([]);
  });
});

describe('faults that excuse nothing', () => {
  // a's lease lapsed while the fault went on; b got in before a heard of its loss.
  const a = hold({ token: 1, start: 1_000, end: 2_000, lostAt: 1_900, outcome: 'lost' });
  const b = hold({ token: 2, start: 1_500, end: 1_600, worker: 1, pid: 101 });
  const overlaps = (f: Fault) => checkHistory([a, b], [f], { lease: LEASE }).violations.map((v) => v.kind);

  it('an empty restart excuses the overlap; a restart with AOF, which keeps the keys, does not', () => {
    expect(overlaps({ kind: 'restart', begin: 1_200, end: 1_240 })).toEqual([]);
    expect(overlaps({ kind: 'aofRestart', begin: 1_200, end: 1_240 })).toEqual(['overlap']);
  });

  it.each(['pubsubKill', 'latency', 'replicaLag', 'failover', 'scriptFlush', 'migrate', 'clockStep'] as const)('%s excuses no overlap', (kind) => {
    expect(overlaps({ kind, worker: 0, begin: 1_200, end: 1_400 })).toEqual(['overlap']);
  });

  it("a Cluster failover excuses the overlap only when its old master was killed or overruled and served the lock, and only a holder told of its loss", () => {
    const killed: Fault = { kind: 'failover', master: 2, locks: ['main'], how: 'killed', begin: 1_200, end: 1_400 };
    const r = checkHistory([a, b], [killed], { lease: LEASE });
    expect(r.violations).toEqual([]);
    expect(r.excused.failover).toBe(1);
    // Forced (CLUSTER FAILOVER FORCE: the old master takes writes until it hears of it) may lose as much.
    expect(overlaps({ ...killed, how: 'forced' })).toEqual([]);
    // A planned CLUSTER FAILOVER loses nothing; a killed master serving other locks lost none of this one's.
    expect(overlaps({ ...killed, how: 'manual' })).toEqual(['overlap']);
    expect(overlaps({ ...killed, locks: ['aux-1'] })).toEqual(['overlap']);
    // The first holder never told: no excuse.
    const untold = checkHistory([{ ...a, lostAt: undefined, outcome: 'released' }, b], [killed], { lease: LEASE });
    expect(untold.violations.map((v) => v.message)).toEqual([expect.stringMatching(/failed over meanwhile.*never learned/)]);
    // A token that went back across it (the replica's counter lagged) is counted, not a violation.
    const back = checkHistory([a, { ...b, token: 1 }], [killed], { lease: LEASE });
    expect(back.violations.filter((v) => v.kind === 'token')).toEqual([]);
    expect(back.tokenResets).toBe(1);
  });

  it("a holder's loop stall explains its own losses only; it excuses an overlap only as a loop gap the worker logged", () => {
    const stall: Fault = { kind: 'loopStall', worker: 0, pid: 100, begin: 1_100, end: 1_890 };
    expect(explainsLossOf(stall, a)).toBe(true);
    expect(explainsLossOf(stall, b)).toBe(false);
    expect(overlaps(stall)).toEqual(['overlap']);
    const r = checkHistory([a, b], [stall], { lease: LEASE, loopGaps: [{ pid: 100, from: 1_100, to: 1_890 }] });
    expect(r.violations).toEqual([]);
    expect(r.excused.starved).toBe(1);
  });
});

describe('fence resets and loop gaps, as a 2 min report run met them', () => {
  it('a token minted again after a failover that began before its first holder took it (FORCE: the old master took writes until it heard) is a fence reset, not a violation', () => {
    const forced: Fault = { kind: 'failover', master: 2, locks: ['main'], how: 'forced', begin: 1_200, end: 3_000 };
    const first = hold({ token: 5, start: 1_300, end: 1_460, lostAt: 1_450, outcome: 'lost' });
    const again = hold({ token: 5, start: 2_000, worker: 1, pid: 101 });
    const r = checkHistory([first, again], [forced], { lease: LEASE });
    expect(r.violations.filter((v) => v.kind === 'token')).toEqual([]);
    expect(r.tokenResets).toBe(1);
    // Without the failover, or with one that loses nothing, the same tokens are a violation.
    expect(checkHistory([first, again], [], { lease: LEASE }).violations.map((v) => v.kind)).toContain('token');
    expect(checkHistory([first, again], [{ ...forced, how: 'manual' }], { lease: LEASE }).violations.map((v) => v.kind)).toContain('token');
  });

  it('a first grant made by the old master after a forced failover began excuses the overlap and the equal token\'s late writes, once its holder is told', () => {
    // FORCE began at 1 200; the old master still granted token 5 at 1 300 (beyond the slack), the new one minted 5 again at 2 000.
    const forced: Fault = { kind: 'failover', master: 2, locks: ['main'], how: 'forced', begin: 1_200, end: 3_000 };
    const first = hold({ token: 5, start: 1_300, end: 2_400, lease: 2_000, lostAt: 2_390, outcome: 'lost', writes: [1_300, 2_100] });
    const again = hold({ token: 5, start: 2_000, end: 2_200, worker: 1, pid: 101, writes: [2_050] });
    const r = checkHistory([first, again], [forced], { lease: LEASE });
    expect(r.violations).toEqual([]);
    expect(r.excused.failover).toBe(1);
    expect(r.writes.acceptedLateAfterDataLoss).toBe(1);
    // A planned failover loses nothing: the same history is an overlap and an accepted late write.
    expect(checkHistory([first, again], [{ ...forced, how: 'manual' }], { lease: LEASE }).violations.map((v) => v.kind)).toEqual(expect.arrayContaining(['overlap', 'fencing']));
  });

  it('after an empty restart, a fixed lease whose release got no answer counts as told; one released without a word does not', () => {
    const restart: Fault = { kind: 'restart', master: 0, begin: 1_200, end: 1_250 };
    // Fixed lease from 1 000; Redis restarted empty at 1 200; b in at 1 400; a's release at 1 600 reached nothing.
    const unanswered = hold({ token: 5, start: 1_000, end: 1_600, lease: 2_000, outcome: 'error', writes: [1_000] });
    const b = hold({ token: 9, start: 1_400, end: 1_500, worker: 1, pid: 101 });
    const r = checkHistory([unanswered, b], [restart], { lease: LEASE });
    expect(r.violations).toEqual([]);
    expect(r.excused.dataLoss).toBe(1);
    const released = checkHistory([{ ...unanswered, outcome: 'released' }, b], [restart], { lease: LEASE });
    expect(released.violations.map((v) => v.message)).toEqual([expect.stringMatching(/restarted empty meanwhile.*never learned/)]);
    // A watchdog hold is renewed (and so told): an unanswered release does not excuse it.
    const renewed = checkHistory([{ ...unanswered, lease: undefined }, b], [restart], { lease: LEASE });
    expect(renewed.violations.map((v) => v.kind)).toEqual(['overlap']);
  });

  it("a fixed lease whose deadline came while its process was stopped, though the pause was shorter than the lease, excuses the overlap once told", () => {
    // Read with a 2 000 ms lease at 1 000; stopped from 2 500 to 3 300 (its deadline, about 3 000, inside).
    const reader = hold({ token: 1, start: 1_000, end: 3_330, lease: 2_000, lostAt: 3_320, outcome: 'lost' });
    const writer = hold({ token: 2, start: 3_050, end: 3_200, worker: 1, pid: 101 });
    const pause: Fault = { kind: 'pause', worker: 0, pid: 100, begin: 2_500, end: 3_300 };
    expect(checkHistory([reader, writer], [pause], { lease: LEASE }).violations).toEqual([]);
    // A pause that ended before the deadline leaves the holder time to tell it: no excuse.
    expect(checkHistory([reader, writer], [{ ...pause, begin: 1_500, end: 2_300 }], { lease: LEASE }).violations.map((v) => v.kind)).toEqual(['overlap']);
  });

  it("a starved holder's loss told within a few turns (30 ms) after its loop gap excuses the overlap; told later, it does not", () => {
    const a = hold({ token: 1, start: 1_000, end: 1_650, lostAt: 1_640, outcome: 'lost' });
    const b = hold({ token: 2, start: 1_500, end: 1_700, worker: 1, pid: 101 });
    const gapTo = (to: number): LoopGap[] => [{ pid: 100, from: 1_100, to }];
    expect(checkHistory([a, b], [], { lease: LEASE, loopGaps: gapTo(1_610) }).violations).toEqual([]);
    expect(checkHistory([a, b], [], { lease: LEASE, loopGaps: gapTo(1_400) }).violations.map((v) => v.kind)).toEqual(['overlap']);
  });
});

describe('holds with a fixed lease', () => {
  // Taken with a 2 400 ms lease at 1 000, paused 1 624 ms from 1 600 (longer than the
  // 800 ms watchdogTimeout, shorter than its own lease), then released normally.
  const pause: Fault = { kind: 'pause', worker: 0, pid: 100, begin: 1_600, end: 3_224 };
  const held = hold({ token: 1, start: 1_000, end: 3_230, lease: 2_400, writes: [1_000, 3_226] });

  it('a pause shorter than its own lease leaves it held: no loss to report', () => {
    expect(checkHistory([held], [pause], { lease: LEASE }).violations).toEqual([]);
  });

  it('a pause longer than its own lease must be reported', () => {
    const short = { ...held, lease: 1_200 };
    expect(checkHistory([short], [pause], { lease: LEASE }).violations.map((v) => v.kind)).toEqual(['pausedUnaware']);
  });
});
