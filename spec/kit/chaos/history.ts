/**
 * The chaos checker: pure functions over the history that the chaos workers log
 * (spec/kit/chaos/worker.ts) and the faults the orchestrator injected (spec/kit/chaos/run.ts).
 *
 * Times are wall-clock milliseconds (Date.now()). They are comparable across the
 * worker processes only because all of them run on ONE machine and share its clock;
 * process.hrtime / performance.now() would not be (each process has its own origin).
 *
 * What is checked, per lock name:
 *  - mutual exclusion: critical sections [start, end] sorted by start never overlap
 *    (read-write locks: reads may overlap reads, never a write; writes never overlap),
 *    unless the earlier holder had been told it lost the lock (lostAt <= later start),
 *    or the overlap is excused by a fault that no lock service on one Redis can mask:
 *    an empty restart of Redis (the key is gone: 'dataLoss') or a SIGSTOP of the
 *    holder's process longer than the lease ('pause'); an excused holder must still
 *    learn that it lost the lock (lostAt set), else it is a violation (after a data
 *    loss, a fixed lease whose release got no answer is as told as it can be: nothing
 *    else asks Redis about it). Also excused:
 *    a holder whose process ran nothing (a loop gap its worker logged, longer than the
 *    library's allowance for late timers) from before the overlap began until it
 *    reported the loss: the machine starved it, a pause nobody injected. In Cluster mode
 *    a restarted node lost only the locks whose slots it serves (Fault.locks): it
 *    excuses nothing for the others; so does a failover whose old master was killed or overruled
 *    (its replica may lack the last grants: 'failover'; anywhere within the fault, as the
 *    old master takes grants until it hears of it), and a planned one excuses nothing;
 *  - fencing tokens strictly increase in start order; a reset is excused only by an
 *    empty restart (the `:fence` counter lived in memory) or a killed or forced failover
 *    (its replica's counter may lag), and is counted (read-write
 *    locks: writes' tokens; a read carries at least the token of every write that
 *    ended before it began);
 *  - a fenced store (accepts a write only if its token is >= the highest seen; the
 *    store is reset with Redis, i.e. ordered per data epoch) must reject every late
 *    write: a write of a hold made after a later hold of the same lock has written
 *    (each hold writes first thing, so this is "once a successor has begun");
 *  - every acquisition ends (released, reported lost, or run() rejected), except
 *    those of SIGKILLed processes, which are cut at kill time.
 */

import { lagAllowance, safety } from '../../../lib/store/lease-margin';
import { explainsLossOf, losesDataOf, type Fault, type FaultKind } from './faults';
import { fencedStore, lossBetween, readTokenViolations } from './fencing';
import type { Hold, LoopGap, Violation } from './records';

export { FAULT_KINDS, SENTINEL_FAULT_KINDS, type Fault, type FaultKind } from './faults';
export * from './records';

export interface CheckOptions {
  /** The watchdog lease of the workers, ms. */
  lease: number;
  /** Clock slack for attributing a hold to a Redis data epoch around a restart, ms. */
  slack?: number;
  /**
   * Quorum mode with this many independent masters: an empty restart of one master loses
   * no lock and no fencing counter (the others hold a majority); only restarts of enough
   * distinct masters (size - quorum + 1) close together count as data loss.
   */
  masters?: number;
  /** Quorum mode: restarts of distinct masters within this window add up (default 5 s). */
  lossWindow?: number;
  /** Stretches in which a worker process ran nothing, as the workers logged them. */
  loopGaps?: readonly LoopGap[];
}

export interface Report {
  /** Holds whose section began right after their process resumed: dated to the pause's start (see grantedBeforePause). */
  startsMovedToPause: number;
  sectionsChecked: number;
  byLock: Record<string, number>;
  /** Of the sections checked, those a multi-lock held (one per name). */
  multiSections: number;
  outcomes: Record<string, number>;
  killedHolds: number;
  /** Overlaps allowed because the earlier holder had been told of its loss first. */
  overlapsAfterLoss: number;
  /** Overlaps excused by a fault no single Redis can mask, or by a starved holder (see starvedThrough). */
  excused: { dataLoss: number; failover: number; pause: number; starved: number };
  /** Longest loop gap among the starved holders excused, ms. */
  longestStarvedMs: number;
  /** Fencing token regressions across an empty restart (the counter was lost with the data). */
  tokenResets: number;
  /** Paused holders that finished their section before learning of the loss (run() still rejected). */
  pausedEndedBeforeLoss: number;
  writes: { total: number; accepted: number; rejectedLate: number; acceptedLateAfterDataLoss: number; rejectedSpurious: number };
  lostHolds: number;
  /** lostAt minus the beginning of the fault that caused it (or the hold's start, if later). */
  detection: {
    explained: number;
    unexplained: number;
    maxDelayMs: number;
    maxDelayHold?: string;
    maxDelayFault?: FaultKind;
    /** Longest delay per kind of fault. */
    byKind: Partial<Record<FaultKind, number>>;
    /** Pauses: longest time from SIGCONT to the loss being reported (the pause itself hides it). */
    maxAfterResumeMs: number;
  };
  violations: Violation[];
}

/** Faults as one lock sees them: restarts of Cluster nodes that do not serve its slot are left out. */
export function faultsFor(lock: string, faults: readonly Fault[]): Fault[] {
  return faults.filter((f) => (f.kind !== 'restart' && f.kind !== 'failover') || losesDataOf(f, lock));
}

/**
 * Moments at which lock data was lost (given the faults of one lock): every empty restart
 * of a single Redis or of the Cluster node serving the lock; in quorum mode, a restart
 * that makes (size - quorum + 1) distinct masters restarted within the window.
 */
function dataLossTimes(faults: readonly Fault[], opts: CheckOptions): number[] {
  const all = faults.filter((f) => f.kind === 'restart' || f.kind === 'failover').sort((a, b) => a.begin - b.begin);
  if (!opts.masters || opts.masters <= 1) return all.map((f) => f.begin);
  const needed = opts.masters - (Math.floor(opts.masters / 2) + 1) + 1;
  const window = opts.lossWindow ?? 5_000;
  return all
    .filter((f) => new Set(all.filter((g) => g.begin <= f.begin && g.begin > f.begin - window).map((g) => g.master)).size >= needed)
    .map((f) => f.begin);
}

/**
 * A section logged right after its process resumed from a pause longer than the lease
 * was granted before or during the pause (a stopped process acts on nothing): its
 * logged start is late by up to the pause, and another holder may have come in
 * meanwhile with a higher token. If it is told of its loss as it begins, it is dated
 * to the pause's start and checked as what it is: a paused holder, which must learn of
 * its loss and whose writes must be fenced.
 */
export function grantedBeforePause(h: Hold, faults: readonly Fault[], lease: number, slack: number): Hold {
  const pause = faults.find((f) => f.kind === 'pause' && f.pid === h.pid && f.end - f.begin >= (h.lease ?? lease) && f.end <= h.start + slack && f.end >= h.start - slack);
  // Only a grant that lapsed during the pause: it is reported lost the moment the
  // section begins (a grant made after the resume is not, and keeps its logged start).
  const lapsed = h.lostAt !== undefined && h.lostAt <= h.start + slack;
  return pause && lapsed && pause.begin < h.start ? { ...h, start: pause.begin } : h;
}

/**
 * A loop gap of the hold's process that began before `before` (when the other holder got
 * in) and lasted until about the moment the hold reported its loss: the process could
 * not report it sooner. Only gaps longer than the library's allowance for late timers
 * count: shorter ones its deadlines absorb, so an overlap across them is a bug. Gaps the
 * sampler logged one right after the other (the process ran less than one of its ticks
 * in between: a resumed process catching up on its backlog) count as one.
 */
/** The loop sampler's period (worker.ts): two gaps closer than this are one stretch in which the process hardly ran. */
const SAMPLER_TICK = 10;

export function starvedThrough(h: Hold, before: number, gaps: readonly LoopGap[], lease: number): LoopGap | undefined {
  if (h.lostAt === undefined) return undefined;
  // After a gap the process first runs what queued up meanwhile (the sampler, renewals,
  // replies, IPC): the loss comes in the sampler's turn or within a few turns after it,
  // one sampler tick plus 20 ms. A holder that ran longer before telling it could have
  // told it earlier.
  const afterGap = SAMPLER_TICK + 20;
  return chained(gaps.filter((g) => g.pid === h.pid)).find((g) => g.to - g.from > lagAllowance(lease) && g.from <= before && g.to >= h.lostAt! - afterGap);
}


/** One process's gaps, those that follow each other within a sampler tick merged. */
function chained(gaps: readonly LoopGap[]): LoopGap[] {
  const out: LoopGap[] = [];
  for (const g of [...gaps].sort((a, b) => a.from - b.from)) {
    const last = out[out.length - 1];
    if (last && g.from - last.to < SAMPLER_TICK) out[out.length - 1] = { ...last, to: Math.max(last.to, g.to) };
    else out.push(g);
  }
  return out;
}

/**
 * A pause of the hold's process that began before `before` and kept it from telling its
 * loss: longer than its lease (a fixed one, or the watchdog's), or, for a fixed lease,
 * one in which the client's deadline for it (its end less the client's margin) came.
 */
export function pauseOf(h: Hold, before: number, faults: readonly Fault[], lease: number): Fault | undefined {
  const end = h.lease === undefined ? undefined : h.start + h.lease;
  const deadlineIn = (f: Fault) => end !== undefined && f.begin <= end && end - safety(h.lease!) <= f.end;
  return faults.find(
    (f) => f.kind === 'pause' && f.pid === h.pid && (f.end - f.begin >= (h.lease ?? lease) || deadlineIn(f)) && f.begin <= before && f.end >= h.start,
  );
}

export function checkHistory(logged: readonly Hold[], faults: readonly Fault[], opts: CheckOptions): Report {
  const { lease } = opts;
  const slack = opts.slack ?? 50;
  const holds = logged.map((h) => grantedBeforePause(h, faults, lease, slack));
  const violations: Violation[] = [];
  const quorumNeeded = opts.masters && opts.masters > 1 ? opts.masters - (Math.floor(opts.masters / 2) + 1) + 1 : 1;
  const report: Report = {
    startsMovedToPause: holds.filter((h, i) => h !== logged[i]).length,
    sectionsChecked: 0,
    byLock: {},
    multiSections: 0,
    outcomes: {},
    killedHolds: 0,
    overlapsAfterLoss: 0,
    excused: { dataLoss: 0, failover: 0, pause: 0, starved: 0 },
    longestStarvedMs: 0,
    tokenResets: 0,
    pausedEndedBeforeLoss: 0,
    writes: { total: 0, accepted: 0, rejectedLate: 0, acceptedLateAfterDataLoss: 0, rejectedSpurious: 0 },
    lostHolds: 0,
    detection: { explained: 0, unexplained: 0, maxDelayMs: 0, byKind: {}, maxAfterResumeMs: 0 },
    violations,
  };

  // Every acquisition ends.
  const ended: Hold[] = [];
  for (const h of holds) {
    if (h.killed) report.killedHolds++;
    else report.outcomes[h.outcome ?? 'none'] = (report.outcomes[h.outcome ?? 'none'] ?? 0) + 1;
    if (h.end === undefined || (h.outcome === undefined && !h.killed)) {
      violations.push({ kind: 'dangling', lock: h.lock, message: `hold ${h.id} (token ${h.token}, pid ${h.pid}) was acquired at ${h.start} and never released, reported lost, or cut by a kill` });
      continue;
    }
    ended.push(h);
  }

  const locks = new Map<string, Hold[]>();
  for (const h of ended) {
    // A semaphore's sections may overlap up to its limit and carry no token: permits.ts checks them.
    if (h.permits !== undefined) continue;
    const list = locks.get(h.lock) ?? [];
    list.push(h);
    locks.set(h.lock, list);
  }

  for (const [lock, list] of locks) {
    list.sort((a, b) => a.start - b.start || a.token - b.token);
    const lockFaults = faultsFor(lock, faults);
    const lossTimes = dataLossTimes(lockFaults, opts);
    // A Cluster failover that loses data (a killed master, or one overruled by FORCE) loses
    // what its old master wrote up to when it stopped taking writes, at some moment between
    // the failover's begin and end: a token minted there, by a holder told of its loss, may
    // be minted again by the new master.
    const failoverWithin = (from: number, to: number): boolean =>
      lockFaults.some((f) => f.kind === 'failover' && f.begin <= to && f.end > from - slack);
    /** This lock's data lost between two moments: enough distinct masters restarted in (from, to]. */
    // `slack` before `from`, as in lossBetween: a grant logged just after a restart began
    // may have come from the old server (its reply in flight while the kill went out).
    const dataLostBetween = (from: number, to: number): boolean =>
      new Set(lockFaults.filter((f) => f.kind === 'restart' && f.begin > from - slack && f.begin <= to).map((f) => f.master ?? 0)).size >= quorumNeeded;
    /**
     * The holder learned of its loss, or could not have: killed, or a fixed lease (no
     * renewal asks Redis) whose release got no answer (it was told the unlock failed).
     */
    const told = (a: Hold): boolean => a.lostAt !== undefined || a.killed === true || (a.lease !== undefined && a.outcome === 'error');
    report.sectionsChecked += list.length;
    report.byLock[lock] = list.length;
    report.multiSections += list.filter((h) => h.with).length;

    // Mutual exclusion.
    const excusedPairs = new Set<string>();
    for (let j = 0; j < list.length; j++) {
      const b = list[j]!;
      for (let i = 0; i < j; i++) {
        const a = list[i]!;
        if (a.end! <= b.start) continue;
        if (a.side === 'read' && b.side === 'read') continue; // readers share
        if (a.lostAt !== undefined && a.lostAt <= b.start) {
          report.overlapsAfterLoss++;
          continue;
        }
        const what = `${a.id} [${a.start}, ${a.end}] token ${a.token} and ${b.id} [${b.start}, ${b.end}] token ${b.token} overlap by ${a.end! - b.start} ms`;
        if (dataLostBetween(a.start, b.start)) {
          if (!told(a)) {
            violations.push({ kind: 'overlap', lock, message: `${what}: Redis restarted empty meanwhile, but the first holder never learned it lost the lock` });
          } else report.excused.dataLoss++;
          excusedPairs.add(`${a.id}|${b.id}`);
          continue;
        }
        // Within the failover, not only after its begin: the old master takes writes until
        // it hears of it, so the first grant may come from it after the fault began.
        if (failoverWithin(a.start, b.start)) {
          if (!told(a)) {
            violations.push({ kind: 'overlap', lock, message: `${what}: the Cluster failed over meanwhile (its old master killed or overruled), but the first holder never learned it lost the lock` });
          } else report.excused.failover++;
          excusedPairs.add(`${a.id}|${b.id}`);
          continue;
        }
        const pause = pauseOf(a, b.start, faults, lease);
        if (pause) {
          if (a.lostAt === undefined) {
            violations.push({ kind: 'pausedUnaware', lock, message: `${what}: the first holder was paused ${pause.end - pause.begin} ms and never learned it lost the lock` });
          } else report.excused.pause++;
          excusedPairs.add(`${a.id}|${b.id}`);
          continue;
        }
        const gap = starvedThrough(a, b.start, opts.loopGaps ?? [], lease);
        if (gap) {
          report.excused.starved++;
          report.longestStarvedMs = Math.max(report.longestStarvedMs, gap.to - gap.from);
          excusedPairs.add(`${a.id}|${b.id}`);
          continue;
        }
        violations.push({
          kind: 'overlap',
          lock,
          message: `${what}; the first holder's loss was ${a.lostAt === undefined ? 'never reported' : `reported only at ${a.lostAt} (${a.lostAt - b.start} ms after the overlap began)`}`,
        });
      }
    }

    // Fencing tokens strictly increase in start order (writes; reads carry the last write's).
    const exclusive = list.filter((h) => h.side !== 'read');
    for (let i = 1; i < exclusive.length; i++) {
      const p = exclusive[i - 1]!;
      const c = exclusive[i]!;
      if (c.token > p.token) continue;
      if (lossBetween(p.start, c.start, lossTimes, slack) || failoverWithin(p.start, c.start)) {
        report.tokenResets++;
        continue;
      }
      violations.push({ kind: 'token', lock, message: `token went from ${p.token} (${p.id}, start ${p.start}) to ${c.token} (${c.id}, start ${c.start})` });
    }

    violations.push(...readTokenViolations(lock, list, lossTimes, slack));

    violations.push(...fencedStore(lock, exclusive, { lossTimes, failoverWithin, slack, lease, excusedPairs, counts: report.writes }));
  }

  // Paused holders; detection delay of losses.
  for (const h of ended) {
    const pause = faults.find((f) => f.kind === 'pause' && f.pid === h.pid && f.end - f.begin >= (h.lease ?? lease) && f.begin >= h.start && f.end <= h.end!);
    if (pause) {
      if (h.lostAt === undefined) violations.push({ kind: 'pausedUnaware', lock: h.lock, message: `${h.id} ran on after a ${pause.end - pause.begin} ms pause and never learned it lost the lock` });
      else if (h.lostAt > h.end!) report.pausedEndedBeforeLoss++;
    }
    if (h.lostAt === undefined) continue;
    report.lostHolds++;
    const cause = causeOf(h, faults, lease);
    if (!cause) {
      report.detection.unexplained++;
      continue;
    }
    report.detection.explained++;
    const delay = h.lostAt - Math.max(cause.begin, h.start);
    report.detection.byKind[cause.kind] = Math.max(report.detection.byKind[cause.kind] ?? 0, delay);
    if (cause.kind === 'pause') report.detection.maxAfterResumeMs = Math.max(report.detection.maxAfterResumeMs, h.lostAt - cause.end);
    if (delay > report.detection.maxDelayMs) {
      report.detection.maxDelayMs = delay;
      report.detection.maxDelayHold = h.id;
      report.detection.maxDelayFault = cause.kind;
    }
  }
  return report;
}

/** The latest fault that can explain the loss of h: one that hit Redis, or h's own process or connection. */
function causeOf(h: Hold, faults: readonly Fault[], lease: number): Fault | undefined {
  let best: Fault | undefined;
  for (const f of faults) {
    if (!explainsLossOf(f, h)) continue;
    if (f.begin > h.lostAt! || f.end < h.start - lease) continue;
    if (!best || f.begin > best.begin) best = f;
  }
  return best;
}
