/**
 * The chaos checker. First on hand-made histories, to show that it can fail (a
 * checker that never fails proves nothing); then one short real run against
 * worker processes while faults are injected (spec/kit/chaos/run.ts).
 */
import { buildHolds, checkHistory, FAULT_KINDS, ghostViolations, heapTrend, loopGaps, type Fault, type Hold, type LogRecord, type LoopGap } from '../kit/chaos/history';
import { runChaos } from '../kit/chaos/run';

const LEASE = 800;
let seq = 0;

function hold(p: Partial<Hold> & Pick<Hold, 'token' | 'start'>): Hold {
  return { id: `h${++seq}`, worker: 0, pid: 100, lock: 'main', end: p.start + 50, outcome: 'released', writes: [p.start], ...p };
}

const check = (holds: Hold[], faults: Fault[] = []) => checkHistory(holds, faults, { lease: LEASE });
const kinds = (holds: Hold[], faults: Fault[] = []) => check(holds, faults).violations.map((v) => v.kind);

describe('chaos checker on hand-made histories', () => {
  it('accepts a clean history and counts its critical sections', () => {
    const r = check([
      hold({ token: 1, start: 1_000, end: 1_100 }),
      hold({ token: 2, start: 1_100, end: 1_200, worker: 1, pid: 101 }),
      hold({ token: 1, start: 1_050, end: 1_300, lock: 'other' }),
    ]);
    expect(r.violations).toEqual([]);
    expect(r.sectionsChecked).toBe(3);
  });

  it('catches an overlap', () => {
    const r = check([hold({ token: 1, start: 1_000, end: 1_200 }), hold({ token: 2, start: 1_150, end: 1_300, worker: 1, pid: 101 })]);
    expect(r.violations.map((v) => v.kind)).toContain('overlap');
    expect(r.violations[0]!.message).toMatch(/overlap by 50 ms.*never reported/);
  });

  it('catches an overlap whose loss was reported only after it began', () => {
    const holds = [
      hold({ token: 1, start: 1_000, end: 1_300, lostAt: 1_250, outcome: 'lost' }),
      hold({ token: 2, start: 1_200, end: 1_400, worker: 1, pid: 101 }),
    ];
    expect(kinds(holds)).toContain('overlap');
  });

  it('allows an overlap that began after the earlier holder was told it lost the lock', () => {
    const r = check([
      hold({ token: 1, start: 1_000, end: 1_900, lostAt: 1_790, outcome: 'lost', writes: [1_000, 1_500] }),
      hold({ token: 2, start: 1_800, end: 1_950, worker: 1, pid: 101, writes: [1_800] }),
    ]);
    expect(r.violations).toEqual([]);
    expect(r.overlapsAfterLoss).toBe(1);
  });

  it('catches a fencing token going backwards, or repeating', () => {
    // The fenced store rejects the lower token's write too: the store did its job, the lock did not.
    expect(kinds([hold({ token: 5, start: 1_000 }), hold({ token: 4, start: 2_000 })])).toEqual(['token', 'fencing']);
    expect(kinds([hold({ token: 5, start: 1_000 }), hold({ token: 5, start: 2_000 })])).toEqual(['token']);
  });

  it('excuses a token reset only across an empty restart of Redis', () => {
    const restart: Fault = { kind: 'restart', begin: 1_500, end: 1_540 };
    const r = check([hold({ token: 5, start: 1_000 }), hold({ token: 1, start: 2_000 })], [restart]);
    expect(r.violations).toEqual([]);
    expect(r.tokenResets).toBe(1);
  });

  it('excuses an overlap whose first grant was logged just after an empty restart began (the old server answered it), not one logged later', () => {
    const b = hold({ token: 2, start: 1_570, end: 1_600, worker: 1, pid: 101 });
    const restart: Fault[] = [{ kind: 'restart', begin: 1_490, end: 1_560 }];
    const loggedJustAfter = hold({ token: 1, start: 1_500, end: 2_000, lostAt: 1_690, outcome: 'lost' });
    const loggedLater = hold({ token: 1, start: 1_565, end: 2_000, lostAt: 1_690, outcome: 'lost' });
    expect(kinds([loggedJustAfter, b], restart)).toEqual([]);
    expect(kinds([loggedLater, b], restart)).toEqual(['overlap']);
  });

  it('in quorum mode, excuses an overlap only when a majority of masters lost their data', () => {
    const a = hold({ token: 1, start: 1_000, end: 2_000, lostAt: 1_900, outcome: 'lost' });
    const b = hold({ token: 2, start: 1_500, end: 1_600, worker: 1, pid: 101 });
    const one: Fault[] = [{ kind: 'restart', master: 0, begin: 1_200, end: 1_240 }];
    const two: Fault[] = [...one, { kind: 'restart', master: 2, begin: 1_300, end: 1_340 }];
    const sameTwice: Fault[] = [...one, { kind: 'restart', master: 0, begin: 1_300, end: 1_340 }];
    const quorum = (faults: Fault[]) => checkHistory([a, b], faults, { lease: LEASE, masters: 3 }).violations.map((v) => v.kind);
    expect(quorum(one)).toEqual(['overlap']);
    expect(quorum(sameTwice)).toEqual(['overlap']);
    expect(quorum(two)).toEqual([]);
    // A single Redis: one empty restart is data loss.
    expect(kinds([a, b], one)).toEqual([]);
  });

  it('in Cluster mode, excuses an overlap only by a restart of the node serving that lock', () => {
    const a = hold({ token: 1, start: 1_000, end: 2_000, lostAt: 1_900, outcome: 'lost' });
    const b = hold({ token: 2, start: 1_500, end: 1_600, worker: 1, pid: 101 });
    const restart = (locks: string[]): Fault[] => [{ kind: 'restart', master: 1, locks, begin: 1_200, end: 3_200 }];
    expect(kinds([a, b], restart(['aux-2']))).toEqual(['overlap']);
    expect(kinds([a, b], restart([]))).toEqual(['overlap']);
    expect(kinds([a, b], restart(['aux-1', 'main']))).toEqual([]);
    // The other lock's restart does not excuse this one, even next to its own excused overlap.
    const c = hold({ token: 1, start: 1_000, end: 2_000, lostAt: 1_900, outcome: 'lost', lock: 'aux-2' });
    const d = hold({ token: 2, start: 1_500, end: 1_600, worker: 1, pid: 101, lock: 'aux-2' });
    const r = check([a, b, c, d], restart(['aux-2']));
    expect(r.violations.map((v) => `${v.kind} ${v.lock}`)).toEqual(['overlap main']);
    expect(r.excused.dataLoss).toBe(1);
  });

  it('in Cluster mode, excuses a token reset only by a restart of the node serving that lock', () => {
    const holds = [hold({ token: 5, start: 1_000 }), hold({ token: 1, start: 2_000 })];
    const restart = (locks: string[]): Fault[] => [{ kind: 'restart', master: 0, locks, begin: 1_500, end: 1_540 }];
    // The fenced store rejects the reset token's write too, as in one data epoch.
    expect(kinds(holds, restart(['aux-1']))).toEqual(['token', 'fencing']);
    const r = check(holds, restart(['main']));
    expect(r.violations).toEqual([]);
    expect(r.tokenResets).toBe(1);
  });

  it('catches a dangling acquisition, but not one cut by a kill', () => {
    const dangling = hold({ token: 1, start: 1_000, end: undefined, outcome: undefined });
    expect(kinds([dangling])).toEqual(['dangling']);
    const records: LogRecord[] = [{ type: 'acq', id: 'k', worker: 0, pid: 42, task: 0, lock: 'main', token: 1, start: 1_000 }];
    const kill: Fault = { kind: 'kill', worker: 0, pid: 42, begin: 1_100, end: 1_105 };
    const holds = buildHolds(records, [kill]);
    expect(holds[0]).toMatchObject({ killed: true, end: 1_100 });
    expect(kinds(holds, [kill])).toEqual([]);
    expect(kinds(buildHolds(records, []), [])).toEqual(['dangling']);
  });

  it('excuses a late loss report only across a loop gap of the holder: starved from before the overlap until the report', () => {
    // The CI case: a loaded machine left the holder's process unscheduled for ~250 ms;
    // its watchdog reported the loss as it ran again, after the next holder got in.
    const a = hold({ token: 1, start: 1_000, end: 1_880, lostAt: 1_874, outcome: 'lost', writes: [1_000] });
    const b = hold({ token: 2, start: 1_855, end: 1_950, worker: 1, pid: 101, writes: [1_855] });
    const withGaps = (...loopGaps: LoopGap[]) => checkHistory([a, b], [], { lease: LEASE, loopGaps });
    const starved = withGaps({ pid: 100, from: 1_620, to: 1_870 });
    expect(starved.violations).toEqual([]);
    expect(starved.excused.starved).toBe(1);
    expect(starved.longestStarvedMs).toBe(250);
    expect(starved.writes.rejectedLate).toBe(0);
    const overlaps = (...loopGaps: LoopGap[]) => withGaps(...loopGaps).violations.map((v) => v.kind);
    expect(overlaps()).toEqual(['overlap']);
    // Within the library's allowance for late timers (50 ms at this lease): its deadlines absorb that.
    expect(overlaps({ pid: 100, from: 1_822, to: 1_870 })).toEqual(['overlap']);
    // The process ran again before the overlap began: it could have reported then.
    expect(overlaps({ pid: 100, from: 1_600, to: 1_800 })).toEqual(['overlap']);
    // It ran from the gap's end well before its report.
    expect(overlaps({ pid: 100, from: 1_620, to: 1_840 })).toEqual(['overlap']);
    // Resumed, it caught up on its backlog for a while (a second gap 2 ms after the first,
    // as after a SIGSTOP shorter than its lease that spanned its lease's end): one stretch.
    expect(overlaps({ pid: 100, from: 1_620, to: 1_840 }, { pid: 100, from: 1_842, to: 1_870 })).toEqual([]);
    // Running 30 ms between the two, it could have reported then.
    expect(overlaps({ pid: 100, from: 1_620, to: 1_810 }, { pid: 100, from: 1_840, to: 1_870 })).toEqual(['overlap']);
    // Another process's gap excuses nothing.
    expect(overlaps({ pid: 101, from: 1_620, to: 1_870 })).toEqual(['overlap']);
    // Never reported at all: no gap excuses that.
    const unaware = { ...a, lostAt: undefined, outcome: 'released' as const };
    expect(checkHistory([unaware, b], [], { lease: LEASE, loopGaps: [{ pid: 100, from: 1_620, to: 1_870 }] }).violations.map((v) => v.kind)).toEqual(['overlap']);
  });

  it('reads loop gaps from the workers\' logs and keeps them out of the holds', () => {
    const records: LogRecord[] = [
      { type: 'acq', id: 'g', worker: 0, pid: 42, task: 0, lock: 'main', token: 1, start: 1_000 },
      { type: 'gap', pid: 42, from: 1_010, to: 1_200 },
      { type: 'rel', id: 'g', at: 1_300, outcome: 'released' },
    ];
    expect(loopGaps(records)).toEqual([{ pid: 42, from: 1_010, to: 1_200 }]);
    expect(buildHolds(records, [])).toHaveLength(1);
  });

  it('excuses the overlap of a paused holder only if it learned of the loss, and its late writes must be fenced off', () => {
    const pause: Fault = { kind: 'pause', worker: 0, pid: 100, begin: 1_100, end: 2_600 };
    const late = hold({ token: 1, start: 1_000, end: 2_610, lostAt: 2_612, outcome: 'lost', writes: [1_000, 1_050, 2_605] });
    const next = hold({ token: 2, start: 1_950, end: 2_700, worker: 1, pid: 101, writes: [1_950, 2_300] });
    const r = check([late, next], [pause]);
    expect(r.violations).toEqual([]);
    expect(r.excused.pause).toBe(1);
    expect(r.writes.rejectedLate).toBe(1);
    expect(r.pausedEndedBeforeLoss).toBe(1);
    expect(r.detection.maxDelayMs).toBe(2_612 - 1_100);

    const unaware = { ...late, lostAt: undefined, outcome: 'released' as const };
    expect(kinds([unaware, next], [pause])).toContain('pausedUnaware');
  });

  it('catches a hold the watchdog kept renewing after its release (a ghost)', () => {
    const records: LogRecord[] = [
      { type: 'acq', id: 'a', worker: 0, pid: 100, task: 0, lock: 'main', token: 1, start: 1_000 },
      { type: 'rel', id: 'a', at: 1_050, outcome: 'released' },
      { type: 'ghost', lock: 'main', owner: 'client-0:7', at: 1_300 },
    ];
    expect(ghostViolations(records).map((v) => v.kind)).toEqual(['ghost']);
    expect(ghostViolations(records.slice(0, 2))).toEqual([]);
    // A ghost line joins no hold: the history itself stays clean.
    expect(check(buildHolds(records, [])).violations).toEqual([]);
  });

  it('reports the heap trend of the longest-lived worker process', () => {
    const mem = (at: number, mb: number): LogRecord => ({ type: 'mem', at, heap: mb * 1_048_576 });
    const shortLived = [mem(0, 50), mem(5_000, 60)];
    const longLived = [mem(0, 30), mem(5_000, 12), mem(10_000, 12), mem(15_000, 13), mem(20_000, 14), mem(25_000, 12)];
    // Warm-up (the first fifth of its life) is skipped; kills leave short-lived processes.
    expect(heapTrend([shortLived, longLived])).toEqual({ spanS: 20, firstMB: 12, lastMB: 12, maxMB: 14 });
    expect(heapTrend([[mem(0, 10)]])).toBeUndefined();
  });

  it('dates a section that began as its process resumed, already lost, to the pause: granted before it', () => {
    // b was granted token 5 just before a 1.3 s SIGSTOP; its lease ran out, a took the lock
    // with token 6; on SIGCONT b's section begins, told at once that the lock is lost.
    const pause: Fault = { kind: 'pause', worker: 1, pid: 101, begin: 1_000, end: 2_300 };
    const a = hold({ token: 6, start: 1_900, end: 2_500, writes: [1_900, 2_310] });
    const b = hold({ token: 5, start: 2_305, end: 2_320, worker: 1, pid: 101, lostAt: 2_305, outcome: 'lost', writes: [2_305] });
    const r = check([a, b], [pause]);
    expect(r.violations).toEqual([]);
    expect(r.startsMovedToPause).toBe(1);
    expect(r.writes.rejectedLate).toBe(1);
    // Not told of the loss as it began: no such excuse (overlap, token order, fencing).
    expect(kinds([a, { ...b, lostAt: 2_400 }], [pause])).toEqual(expect.arrayContaining(['overlap', 'token']));
  });

  it('catches a late write the fenced store accepted (the successor had a lower token)', () => {
    const pause: Fault = { kind: 'pause', worker: 0, pid: 100, begin: 1_100, end: 2_600 };
    // A token that does not fence: the successor's token is lower (in the same data epoch).
    const late = hold({ token: 9, start: 1_000, end: 2_610, lostAt: 2_612, outcome: 'lost', writes: [1_000, 2_605] });
    const next = hold({ token: 10, start: 1_950, end: 2_700, worker: 1, pid: 101, writes: [1_950] });
    expect(kinds([late, next], [pause])).toEqual([]);
    expect(kinds([late, { ...next, token: 8 }], [pause])).toEqual(expect.arrayContaining(['token', 'fencing']));
  });

  it('read-write locks: lets reads overlap, catches a read overlapping a write, two writes, and a read with a stale token', () => {
    const read = (p: Partial<Hold> & Pick<Hold, 'token' | 'start'>) => hold({ side: 'read', writes: [], ...p });
    const write = (p: Partial<Hold> & Pick<Hold, 'token' | 'start'>) => hold({ side: 'write', ...p });
    expect(kinds([write({ token: 7, start: 900, end: 990 }), read({ token: 7, start: 1_000, end: 1_200 }), read({ token: 7, start: 1_100, end: 1_300, pid: 101 }), write({ token: 8, start: 1_300 })])).toEqual([]);
    expect(kinds([read({ token: 7, start: 1_000, end: 1_200 }), write({ token: 8, start: 1_150, pid: 101 })])).toEqual(['overlap']);
    expect(kinds([write({ token: 8, start: 1_000, end: 1_200 }), read({ token: 8, start: 1_150, pid: 101 })])).toEqual(['overlap']);
    expect(kinds([write({ token: 8, start: 1_000, end: 1_200 }), write({ token: 9, start: 1_150, pid: 101 })])).toEqual(['overlap']);
    expect(kinds([write({ token: 8, start: 1_000, end: 1_100 }), read({ token: 7, start: 1_150, pid: 101 })])).toEqual(['token']);
  });

  it('multi-locks: a name held from its grant, before the section began, is checked from then on', () => {
    // The multi-lock's first name was granted at 1_000 and its section began at 1_400,
    // once the second came; Redis restarted empty at 1_200 and another owner took the
    // first name at 1_300 (the worker logs a name's section from its grant).
    const restart: Fault[] = [{ kind: 'restart', begin: 1_200, end: 1_240 }];
    const multi = (p: Partial<Hold>) => hold({ token: 5, start: 1_000, end: 1_800, with: ['aux-1'], writes: [1_400, 1_700], ...p });
    const other = hold({ token: 9, start: 1_300, end: 1_350, worker: 1, pid: 101, writes: [1_300] });
    // It learned of the loss: excused by the restart, and its later writes are fenced off.
    const r = check([multi({ lostAt: 1_750 }), other], restart);
    expect(r.violations).toEqual([]);
    expect(r.excused.dataLoss).toBe(1);
    // Told of nothing: a violation, as for any hold.
    expect(kinds([multi({}), other], restart)).toContain('overlap');
  });

  it('multi-locks: checks each name\'s section as that lock\'s, so a multi section overlapping a section of either name is caught', () => {
    // One getMultiLock(['main', 'aux-1']) section, logged once per name with that name's token.
    const multi = [hold({ token: 5, start: 1_000, end: 1_200, with: ['aux-1'] }), hold({ token: 3, start: 1_000, end: 1_200, lock: 'aux-1', with: ['main'] })];
    const r = check([...multi, hold({ token: 4, start: 1_200, lock: 'aux-1', worker: 1, pid: 101 }), hold({ token: 6, start: 1_250, worker: 1, pid: 101 })]);
    expect(r.violations).toEqual([]);
    expect(r.multiSections).toBe(2);
    // Another holder of aux-1 alone inside the multi section (its token would be fine).
    const inside = check([...multi, hold({ token: 4, start: 1_100, lock: 'aux-1', worker: 1, pid: 101 })]).violations;
    expect(inside.map((v) => [v.kind, v.lock])).toEqual([['overlap', 'aux-1']]);
    // And on main: the multi section's name that came second in the given order is no less checked.
    expect(kinds([...multi, hold({ token: 6, start: 1_199, worker: 1, pid: 101 })])).toEqual(['overlap']);
  });
});

describe('a real chaos run', () => {
  jest.setTimeout(120_000);

  /** No violation; the run's summary goes to stderr when there is one. */
  function expectNoViolations(result: Awaited<ReturnType<typeof runChaos>>): void {
    if (result.violations.length > 0) process.stderr.write(`${result.summary}\n`);
    expect(result.violations.map((v) => `[${v.kind}] ${v.message}`)).toEqual([]);
  }

  it('keeps mutual exclusion under kills, pauses, restarts, SCRIPT FLUSH, stalls, dropped connections, killed subscribers, latency and blocked loops', async () => {
    const result = await runChaos({ durationMs: 30_000, faultGap: [500, 1_200] });
    expectNoViolations(result);
    // The fenced register, untouched by the faults, saw the holders' writes.
    expect(result.register.writes).toBeGreaterThan(100);
    expect(result.waits.waits).toBeGreaterThan(100);
    expect(result.report.sectionsChecked).toBeGreaterThanOrEqual(100); // ~250-400 on an idle 2-core machine
    for (const kind of FAULT_KINDS) expect(result.faultsByKind[kind]).toBeGreaterThanOrEqual(1);
    expect(result.report.lostHolds).toBeGreaterThanOrEqual(1);
  });

  it('read-write locks: never a reader and a writer at once, at most one writer, under the same faults', async () => {
    const result = await runChaos({ readWrite: true, durationMs: 20_000, faultGap: [500, 1_200] });
    expectNoViolations(result);
    expect(result.report.sectionsChecked).toBeGreaterThanOrEqual(100);
    for (const kind of FAULT_KINDS) expect(result.faultsByKind[kind]).toBeGreaterThanOrEqual(1);
  });

  it("fair locks: the release's grant to the queue's head keeps mutual exclusion and fencing, under the same faults", async () => {
    const result = await runChaos({ fair: true, durationMs: 20_000, faultGap: [500, 1_200] });
    expectNoViolations(result);
    // ~430 sections in a minute on an idle 2-core machine.
    expect(result.report.sectionsChecked).toBeGreaterThanOrEqual(40);
    for (const kind of FAULT_KINDS) expect(result.faultsByKind[kind]).toBeGreaterThanOrEqual(1);
  });

  it('multi-locks: every name of a multi-lock held together, excluding every other section of those names, under the same faults', async () => {
    const result = await runChaos({ multi: true, durationMs: 20_000, faultGap: [500, 1_200] });
    expectNoViolations(result);
    // A multi section keeps two names from everyone else: fewer sections than the plain run
    // (~500 in 2 min idle, 75 in 20 s with the whole suite loading the machine).
    expect(result.report.sectionsChecked).toBeGreaterThanOrEqual(40);
    expect(result.report.multiSections).toBeGreaterThanOrEqual(10);
    for (const kind of FAULT_KINDS) expect(result.faultsByKind[kind]).toBeGreaterThanOrEqual(1);
  });

  it('with AOF (fsync always) a restart keeps the locks: no overlap is excused, none happens', async () => {
    const result = await runChaos({ aof: true, durationMs: 20_000, faultGap: [500, 1_200] });
    expectNoViolations(result);
    expect(result.faultsByKind.aofRestart).toBeGreaterThanOrEqual(1);
    expect(result.faultsByKind.restart).toBeUndefined();
    expect(result.report.excused.dataLoss).toBe(0);
    expect(result.register.writes).toBeGreaterThan(100);
  });

  it('keeps mutual exclusion on a Redis Cluster whose nodes restart empty', async () => {
    // Shorter than the single-master run: it shares npm test's wall time. Each kind
    // comes once first, so a restart (2+ s with the cluster settling) always happens.
    const result = await runChaos({ mode: 'cluster', durationMs: 20_000, faultGap: [500, 1_200] });
    expectNoViolations(result);
    expect(result.report.sectionsChecked).toBeGreaterThanOrEqual(60); // ~130-200 on an idle 2-core machine
    for (const kind of [...FAULT_KINDS, 'migrate' as const]) expect(result.faultsByKind[kind]).toBeGreaterThanOrEqual(1);
    // Every restart names the locks its node served (none, for a node without their slots).
    for (const f of result.faults.filter((x) => x.kind === 'restart')) expect(f.locks).toBeDefined();
    // The proxy check saw the workers' connections (3 workers x 3 nodes at least), sharded subscribers among them.
    expect(result.clientsChecked.clients).toBeGreaterThanOrEqual(9);
    expect(result.clientsChecked.shardSubscribers).toBeGreaterThanOrEqual(1);
  });

  it('a Cluster with a replica per master fails over (a master killed, or CLUSTER FAILOVER with or without FORCE) with every loss told', async () => {
    // Failovers only: a killed master takes ~9 s (promotion after the 2 s node timeout, then its return as a replica).
    const result = await runChaos({ mode: 'cluster', replicas: true, faults: ['failover'], durationMs: 20_000, faultGap: [500, 1_200] });
    expectNoViolations(result);
    expect(result.faultsByKind.failover).toBeGreaterThanOrEqual(1);
    for (const f of result.faults) expect(f).toMatchObject({ kind: 'failover', locks: expect.any(Array), how: expect.stringMatching(/^(killed|forced|manual)$/) });
    expect(result.report.sectionsChecked).toBeGreaterThanOrEqual(30);
    expect(result.register.writes).toBeGreaterThan(100);
  });
});
