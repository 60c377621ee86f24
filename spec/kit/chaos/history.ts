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
 *    learn that it lost the lock (lostAt set), else it is a violation. Also excused:
 *    a holder whose process ran nothing (a loop gap its worker logged, longer than the
 *    library's allowance for late timers) from before the overlap began until it
 *    reported the loss: the machine starved it, a pause nobody injected. In Cluster mode
 *    a restarted node lost only the locks whose slots it serves (Fault.locks): it
 *    excuses nothing for the others;
 *  - fencing tokens strictly increase in start order; a reset is excused only by an
 *    empty restart (the `:fence` counter lived in memory), and is counted (read-write
 *    locks: writes' tokens; a read carries at least the token of every write that
 *    ended before it began);
 *  - a fenced store (accepts a write only if its token is >= the highest seen; the
 *    store is reset with Redis, i.e. ordered per data epoch) must reject every late
 *    write: a write of a hold made after a later hold of the same lock has written
 *    (each hold writes first thing, so this is "once a successor has begun");
 *  - every acquisition ends (released, reported lost, or run() rejected), except
 *    those of SIGKILLed processes, which are cut at kill time.
 */

import { lagAllowance } from '../../../lib/store/lease-margin';

/**
 * 'failover' (Sentinel mode only): the primary SIGKILLed, a replica promoted, the old
 * one back as a replica. It excuses nothing: a lock must survive it (option syncReplicas).
 */
export type FaultKind = 'kill' | 'pause' | 'restart' | 'scriptFlush' | 'stall' | 'drop' | 'failover';
/** The faults of the single, quorum and Cluster modes. */
export const FAULT_KINDS: readonly FaultKind[] = ['kill', 'pause', 'restart', 'scriptFlush', 'stall', 'drop'];
/** Sentinel mode's: the workers reach Redis through Sentinel, not through proxies (no stall, drop). */
export const SENTINEL_FAULT_KINDS: readonly FaultKind[] = ['failover', 'kill', 'pause', 'scriptFlush'];

export interface Fault {
  kind: FaultKind;
  /** Worker slot for kill/pause/stall. */
  worker?: number;
  /** Process hit by kill/pause (its holds are cut at a kill). */
  pid?: number;
  /** Quorum and Cluster mode: the master (node) restarted. */
  master?: number;
  /**
   * Cluster mode, restart: the locks whose slots the restarted node serves, the only
   * ones whose data it lost. Absent: every lock (a single Redis, or quorum masters).
   */
  locks?: string[];
  /** When the fault began (for a restart: the moment the old server was dead). */
  begin: number;
  /** When it ended (resume, restart done, proxy forwarding again). */
  end: number;
}

/**
 * One line of a worker's JSONL log. `id` joins the lines of one hold. An acq with `with`
 * is one name's section of a multi-lock (the other names it held together); it is
 * checked as any section of its name.
 */
export type LogRecord =
  /** permits: a semaphore's section (its `lock` is the semaphore's name), checked by spec/kit/chaos/permits.ts; side: a read-write lock's. */
  | { type: 'acq'; id: string; worker: number; pid: number; task: number; lock: string; token: number; start: number; permits?: number; side?: 'read' | 'write'; with?: string[] }
  | { type: 'w'; id: string; at: number }
  /** A reader acted in its section (it writes nothing to the fenced store). */
  | { type: 'act'; id: string; at: number }
  | { type: 'lost'; id: string; at: number; reason?: string }
  | { type: 'end'; id: string; at: number }
  | { type: 'rel'; id: string; at: number; outcome: Outcome; error?: string }
  /** The worker's watchdog renewed a lock none of its sections held (a hold outlived its release). */
  | { type: 'ghost'; lock: string; owner: string; at: number }
  /** The worker's heap after a forced GC, sampled every few seconds. */
  | { type: 'mem'; at: number; heap: number }
  /** The worker's event loop ran nothing from `from` to `to` (see LoopGap). */
  | { type: 'gap'; pid: number; from: number; to: number };

/**
 * A stretch in which a worker process ran nothing: its 10 ms sampler timer fired that
 * late. A SIGSTOP shows as one; so does a machine too loaded to schedule the process.
 * A starved holder can no more report a loss on time than a paused one.
 */
export interface LoopGap {
  pid: number;
  from: number;
  to: number;
}

export function loopGaps(records: readonly LogRecord[]): LoopGap[] {
  return records.flatMap((r) => (r.type === 'gap' ? [{ pid: r.pid, from: r.from, to: r.to }] : []));
}

/** released: run() resolved; lost: it rejected with LockLostError; error: any other rejection. */
export type Outcome = 'released' | 'lost' | 'error';

/** One critical section, as the checker sees it. */
export interface Hold {
  id: string;
  worker: number;
  pid: number;
  lock: string;
  /** A read-write lock's side; absent: a lock (exclusive). */
  side?: 'read' | 'write';
  token: number;
  /** A semaphore's section: the permits it held (checked by spec/kit/chaos/permits.ts, not as a lock). */
  permits?: number;
  /** A multi-lock's section of this name: the other names it held together. */
  with?: string[];
  start: number;
  /** Last moment the holder acted in it; for a killed process, the kill. Absent: never ended. */
  end?: number;
  lostAt?: number;
  lostReason?: string;
  outcome?: Outcome;
  /** Wall-clock times of the holder's writes to the fenced store. */
  writes: number[];
  /** Its process was SIGKILLed before it ended. */
  killed?: boolean;
}

/** 'proxy': a worker's connection to Redis bypassed its proxy (a stall would then not cut it off). */
export type ViolationKind = 'overlap' | 'token' | 'dangling' | 'fencing' | 'pausedUnaware' | 'leak' | 'exit' | 'worker' | 'proxy' | 'ghost';

export interface Violation {
  kind: ViolationKind;
  lock?: string;
  message: string;
}

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
  excused: { dataLoss: number; pause: number; starved: number };
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

/** Every renewal of a lock none of the worker's sections held: a hold that outlived its release. */
export function ghostViolations(records: readonly LogRecord[]): Violation[] {
  return records.flatMap((r) =>
    r.type === 'ghost' ? [{ kind: 'ghost' as const, lock: r.lock, message: `at ${r.at} the watchdog renewed ${r.owner}'s hold of ${r.lock}, which no section held any more (released, yet still holding)` }] : [],
  );
}

export interface HeapTrend {
  /** Seconds between the first and last sample used. */
  spanS: number;
  /** Heap after GC, MB: the first sample past warm-up (a fifth of the span), the last, the largest from then on. */
  firstMB: number;
  lastMB: number;
  maxMB: number;
}

/** The heap of the longest-lived worker process over its life (one log file per process). */
export function heapTrend(perProcess: readonly (readonly LogRecord[])[]): HeapTrend | undefined {
  let best: { at: number; heap: number }[] = [];
  for (const records of perProcess) {
    const samples = records.flatMap((r) => (r.type === 'mem' ? [{ at: r.at, heap: r.heap }] : []));
    if (samples.length > 1 && samples[samples.length - 1]!.at - samples[0]!.at > (best.length > 1 ? best[best.length - 1]!.at - best[0]!.at : 0)) best = samples;
  }
  if (best.length < 2) return undefined;
  const t0 = best[0]!.at;
  const warm = best.find((s) => s.at - t0 >= (best[best.length - 1]!.at - t0) / 5) ?? best[0]!;
  const last = best[best.length - 1]!;
  const mb = (b: number) => Math.round((b / 1_048_576) * 10) / 10;
  return { spanS: Math.round((last.at - warm.at) / 1_000), firstMB: mb(warm.heap), lastMB: mb(last.heap), maxMB: mb(Math.max(...best.filter((s) => s.at >= warm.at).map((s) => s.heap))) };
}

/** Joins log records into holds; holds of killed processes are cut at the kill. */
export function buildHolds(records: readonly LogRecord[], faults: readonly Fault[]): Hold[] {
  const holds = new Map<string, Hold>();
  const pending: LogRecord[] = [];
  for (const r of records) {
    if (r.type === 'acq') {
      holds.set(r.id, { id: r.id, worker: r.worker, pid: r.pid, lock: r.lock, ...(r.side ? { side: r.side } : {}), token: r.token, start: r.start, writes: [], ...(r.permits === undefined ? {} : { permits: r.permits }), ...(r.with ? { with: r.with } : {}) });
    } else pending.push(r);
  }
  for (const r of pending) {
    if (r.type === 'ghost' || r.type === 'mem' || r.type === 'gap') continue; // see ghostViolations(), heapTrend(), loopGaps()
    const h = holds.get(r.id);
    if (!h) continue; // the acq line was the one in flight when its process was killed
    switch (r.type) {
      case 'w':
        h.writes.push(r.at);
        break;
      case 'act':
        break;
      case 'lost':
        if (h.lostAt === undefined || r.at < h.lostAt) {
          h.lostAt = r.at;
          h.lostReason = r.reason;
        }
        break;
      case 'end':
        h.end = r.at;
        break;
      case 'rel':
        h.outcome = r.outcome;
        if (h.end === undefined) h.end = r.at;
        break;
    }
  }
  const kills = faults.filter((f) => f.kind === 'kill' && f.pid !== undefined);
  for (const h of holds.values()) {
    h.writes.sort((a, b) => a - b);
    if (h.outcome !== undefined) continue;
    const kill = kills.find((k) => k.pid === h.pid && k.begin >= h.start - 5);
    if (kill) {
      h.killed = true;
      h.end = Math.min(h.end ?? kill.begin, kill.begin);
    }
  }
  return [...holds.values()];
}

/** The fault could have lost this lock's data: a restart of the Cluster node serving its slot, or of a master holding every lock. */
function losesDataOf(f: Fault, lock: string): boolean {
  return f.kind === 'restart' && (f.locks === undefined || f.locks.includes(lock));
}

/** Faults as one lock sees them: restarts of Cluster nodes that do not serve its slot are left out. */
export function faultsFor(lock: string, faults: readonly Fault[]): Fault[] {
  return faults.filter((f) => f.kind !== 'restart' || losesDataOf(f, lock));
}

/**
 * Moments at which lock data was lost (given the faults of one lock): every empty restart
 * of a single Redis or of the Cluster node serving the lock; in quorum mode, a restart
 * that makes (size - quorum + 1) distinct masters restarted within the window.
 */
function dataLossTimes(faults: readonly Fault[], opts: CheckOptions): number[] {
  const all = faults.filter((f) => f.kind === 'restart').sort((a, b) => a.begin - b.begin);
  if (!opts.masters || opts.masters <= 1) return all.map((f) => f.begin);
  const needed = opts.masters - (Math.floor(opts.masters / 2) + 1) + 1;
  const window = opts.lossWindow ?? 5_000;
  return all
    .filter((f) => new Set(all.filter((g) => g.begin <= f.begin && g.begin > f.begin - window).map((g) => g.master)).size >= needed)
    .map((f) => f.begin);
}

function epochOf(time: number, lossTimes: readonly number[]): number {
  let e = 0;
  for (const t of lossTimes) if (t <= time) e++;
  return e;
}

/** A data loss between two moments (inclusive of `to`, with `slack` before `from`). */
function lossBetween(from: number, to: number, lossTimes: readonly number[], slack: number): boolean {
  return lossTimes.some((t) => t > from - slack && t <= to);
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
  const pause = faults.find((f) => f.kind === 'pause' && f.pid === h.pid && f.end - f.begin >= lease && f.end <= h.start + slack && f.end >= h.start - slack);
  // Only a grant that lapsed during the pause: it is reported lost the moment the
  // section begins (a grant made after the resume is not, and keeps its logged start).
  const lapsed = h.lostAt !== undefined && h.lostAt <= h.start + slack;
  return pause && lapsed && pause.begin < h.start ? { ...h, start: pause.begin } : h;
}

/**
 * A loop gap of the hold's process that began before `before` (when the other holder got
 * in) and lasted until about the moment the hold reported its loss: the process could
 * not report it sooner. Only gaps longer than the library's allowance for late timers
 * count: shorter ones its deadlines absorb, so an overlap across them is a bug.
 */
export function starvedThrough(h: Hold, before: number, gaps: readonly LoopGap[], lease: number): LoopGap | undefined {
  if (h.lostAt === undefined) return undefined;
  // The sampler and the watchdog fire in the same turn after a gap, either first.
  const sameTurn = 20;
  return gaps.find((g) => g.pid === h.pid && g.to - g.from > lagAllowance(lease) && g.from <= before && g.to >= h.lostAt! - sameTurn);
}

/** A pause of the hold's process, longer than the lease, that began before `before`. */
export function pauseOf(h: Hold, before: number, faults: readonly Fault[], lease: number): Fault | undefined {
  return faults.find(
    (f) => f.kind === 'pause' && f.pid === h.pid && f.end - f.begin >= lease && f.begin <= before && f.end >= h.start,
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
    excused: { dataLoss: 0, pause: 0, starved: 0 },
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
    /** This lock's data lost between two moments: enough distinct masters restarted in (from, to]. */
    // `slack` before `from`, as in lossBetween: a grant logged just after a restart began
    // may have come from the old server (its reply in flight while the kill went out).
    const dataLostBetween = (from: number, to: number): boolean =>
      new Set(lockFaults.filter((f) => f.kind === 'restart' && f.begin > from - slack && f.begin <= to).map((f) => f.master ?? 0)).size >= quorumNeeded;
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
          if (a.lostAt === undefined && !a.killed) {
            violations.push({ kind: 'overlap', lock, message: `${what}: Redis restarted empty meanwhile, but the first holder never learned it lost the lock` });
          } else report.excused.dataLoss++;
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
      if (lossBetween(p.start, c.start, lossTimes, slack)) {
        report.tokenResets++;
        continue;
      }
      violations.push({ kind: 'token', lock, message: `token went from ${p.token} (${p.id}, start ${p.start}) to ${c.token} (${c.id}, start ${c.start})` });
    }

    violations.push(...readTokenViolations(lock, list, lossTimes, slack));

    // A fenced store: accepts a write only if (epoch, token) >= the highest seen.
    const writes: { at: number; hold: Hold; epoch: number }[] = [];
    for (const h of exclusive) {
      // The data epoch in which the hold was granted: its start, less the slack
      // (a grant from the old server may be logged just after it died).
      const epoch = epochOf(h.start - slack, lossTimes);
      for (const at of h.writes) writes.push({ at, hold: h, epoch });
    }
    // Writes in the same millisecond are concurrent: the lower token first (no false alarm).
    writes.sort((x, y) => x.at - y.at || x.epoch - y.epoch || x.hold.token - y.hold.token);
    let maxEpoch = -1;
    let maxToken = -Infinity;
    for (const w of writes) {
      report.writes.total++;
      const h = w.hold;
      const accepted = w.epoch > maxEpoch || (w.epoch === maxEpoch && h.token >= maxToken);
      if (accepted) {
        maxEpoch = w.epoch;
        maxToken = h.token;
        report.writes.accepted++;
      }
      // Late: a later hold of this lock had begun, and written, before this write.
      const successor = exclusive.find((o) => o !== h && o.start > h.start && o.writes.length > 0 && o.writes[0]! < w.at);
      if (successor) {
        if (!accepted) report.writes.rejectedLate++;
        else if (lossBetween(h.start, w.at, lossTimes, 0)) report.writes.acceptedLateAfterDataLoss++;
        else {
          violations.push({ kind: 'fencing', lock, message: `late write at ${w.at} by ${h.id} (token ${h.token}) was accepted although ${successor.id} (token ${successor.token}) began at ${successor.start}${excusedPairs.has(`${h.id}|${successor.id}`) ? ' (during an excused overlap)' : ''}` });
        }
      } else if (!accepted) {
        if (lossBetween(w.at - 3 * lease, w.at, lossTimes, 0)) report.writes.rejectedSpurious++;
        else violations.push({ kind: 'fencing', lock, message: `write at ${w.at} by ${h.id} (token ${h.token}), the only holder then, was rejected by the store (highest token ${maxToken})` });
      }
    }
  }

  // Paused holders; detection delay of losses.
  for (const h of ended) {
    const pause = faults.find((f) => f.kind === 'pause' && f.pid === h.pid && f.end - f.begin >= lease && f.begin >= h.start && f.end <= h.end!);
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

/**
 * Read-write locks: a read's token is the counter when it began, so at least the token
 * of every write that had ended by then (unless the counter was lost with the data).
 */
function readTokenViolations(lock: string, list: readonly Hold[], lossTimes: readonly number[], slack: number): Violation[] {
  const out: Violation[] = [];
  // Writes that ended cleanly, by end; reads by start (list is sorted by start): one pass.
  const writes = list.filter((w) => w.side === 'write' && !w.killed && w.lostAt === undefined).sort((a, b) => a.end! - b.end!);
  let last: Hold | undefined;
  let i = 0;
  for (const r of list) {
    if (r.side !== 'read') continue;
    for (; i < writes.length && writes[i]!.end! < r.start; i++) if (!last || writes[i]!.token > last.token) last = writes[i];
    if (!last || r.token >= last.token || lossBetween(last.start, r.start, lossTimes, slack)) continue;
    out.push({ kind: 'token', lock, message: `read ${r.id} (start ${r.start}) carried token ${r.token}, below ${last.token} of write ${last.id} that ended at ${last.end}` });
  }
  return out;
}

/** The latest fault that can explain the loss of h: one that hit Redis, or h's own process or connection. */
function causeOf(h: Hold, faults: readonly Fault[], lease: number): Fault | undefined {
  let best: Fault | undefined;
  for (const f of faults) {
    if (f.kind === 'kill') continue;
    // A failover explains a loss (renewals fail while no primary answers) but excuses no overlap.
    const mine = losesDataOf(f, h.lock) || f.kind === 'scriptFlush' || f.kind === 'failover' || (f.kind === 'pause' ? f.pid === h.pid : (f.kind === 'stall' || f.kind === 'drop') && f.worker === h.worker);
    if (!mine) continue;
    if (f.begin > h.lostAt! || f.end < h.start - lease) continue;
    if (!best || f.begin > best.begin) best = f;
  }
  return best;
}

/** Cluster mode: which node each restart hit, and the locks it lost (a restart elsewhere excuses nothing for them). */
function clusterRestarts(faults: readonly Fault[]): string[] {
  const restarts = faults.filter((f) => f.kind === 'restart' && f.locks !== undefined);
  if (restarts.length === 0) return [];
  const byNode = new Map<string, number>();
  for (const f of restarts) {
    const what = `node ${f.master ?? '?'} (${f.locks!.length > 0 ? f.locks!.join(', ') : 'no lock'})`;
    byNode.set(what, (byNode.get(what) ?? 0) + 1);
  }
  return [`  restarts: ${[...byNode].sort().map(([what, n]) => `${what} ${n}`).join(', ')}`];
}

export function formatReport(r: Report, faults: readonly Fault[]): string {
  const byKind: Record<string, number> = {};
  for (const k of FAULT_KINDS) byKind[k] = 0;
  for (const f of faults) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
  const lines = [
    `critical sections checked: ${r.sectionsChecked} (${Object.entries(r.byLock).map(([k, v]) => `${k}: ${v}`).join(', ')})${r.multiSections ? `, ${r.multiSections} of them a multi-lock's (one per name)` : ''}`,
    `outcomes: ${Object.entries(r.outcomes).map(([k, v]) => `${k} ${v}`).join(', ')}; cut by kill: ${r.killedHolds}`,
    `faults injected: ${Object.entries(byKind).map(([k, v]) => `${k} ${v}`).join(', ')}`,
    ...clusterRestarts(faults),
    `overlaps after a reported loss: ${r.overlapsAfterLoss}; excused by empty restart: ${r.excused.dataLoss}, by pause: ${r.excused.pause}, by a starved holder: ${r.excused.starved}${r.excused.starved ? ` (its process ran nothing for up to ${r.longestStarvedMs} ms)` : ''}`,
    `fence counter resets by empty restart: ${r.tokenResets}; paused holders that ended before learning of the loss: ${r.pausedEndedBeforeLoss}; sections dated back to their process's pause: ${r.startsMovedToPause}`,
    `fenced writes: ${r.writes.total}, accepted ${r.writes.accepted}, late writes rejected ${r.writes.rejectedLate}, late accepted after data loss ${r.writes.acceptedLateAfterDataLoss}, rejected after a fence reset ${r.writes.rejectedSpurious}`,
    `lost holds: ${r.lostHolds} (explained by a fault ${r.detection.explained}, unexplained ${r.detection.unexplained}); longest detection delay: ${r.detection.maxDelayMs} ms${r.detection.maxDelayFault ? ` (${r.detection.maxDelayFault}, ${r.detection.maxDelayHold})` : ''}`,
    `  by fault: ${Object.entries(r.detection.byKind).map(([k, v]) => `${k} ${v} ms`).join(', ') || 'none'}; after SIGCONT of a paused holder: ${r.detection.maxAfterResumeMs} ms`,
    `violations: ${r.violations.length}`,
    ...r.violations.slice(0, 30).map((v) => `  - [${v.kind}]${v.lock ? ` ${v.lock}:` : ''} ${v.message}`),
  ];
  if (r.violations.length > 30) lines.push(`  ... and ${r.violations.length - 30} more`);
  return lines.join('\n');
}
