/**
 * The chaos checker's semaphore invariant: at no moment do the sections of one
 * semaphore hold more than its limit of permits. Pure, over the holds buildHolds()
 * made of the workers' logs (those with `permits`) and the faults injected.
 *
 * A section counts from its start until it ended, or until its holder was told it lost
 * its permits (lostAt), whichever is first. The sum only grows when a section starts,
 * so it is checked at each start. Above the limit, the sections that no Redis can keep
 * in line are left out, as the lock's checker excuses them (history.ts): a holder whose
 * data a restart emptied before the new section began (it must then learn of its loss,
 * or have been killed), one paused longer than the lease, one whose process ran nothing
 * until it reported the loss. Still above the limit: a violation.
 */
import { faultsFor, grantedBeforePause, pauseOf, starvedThrough, type Fault, type Hold, type LoopGap, type Violation } from './history';
import { losesDataOf } from './faults';

export interface PermitReport {
  sectionsChecked: number;
  /** The most permits held at once, before excuses. */
  maxHeld: number;
  /** Moments above the limit that the excused holders explain. */
  excused: { dataLoss: number; pause: number; starved: number };
  violations: Violation[];
}

export interface PermitCheckOptions {
  lease: number;
  /** Each semaphore's limit, by name. */
  limits: Readonly<Record<string, number>>;
  loopGaps?: readonly LoopGap[];
  slack?: number;
}

type Excuse = keyof PermitReport['excused'];

export function checkPermits(logged: readonly Hold[], faults: readonly Fault[], opts: PermitCheckOptions): PermitReport {
  const slack = opts.slack ?? 50;
  const report: PermitReport = { sectionsChecked: 0, maxHeld: 0, excused: { dataLoss: 0, pause: 0, starved: 0 }, violations: [] };
  const bySemaphore = new Map<string, Hold[]>();
  for (const h of logged) {
    if (h.permits === undefined || h.end === undefined) continue; // a section that never ended is history.ts's 'dangling'
    const held = grantedBeforePause(h, faults, opts.lease, slack);
    bySemaphore.set(h.lock, [...(bySemaphore.get(h.lock) ?? []), held]);
  }
  for (const [name, holds] of bySemaphore) {
    const limit = opts.limits[name];
    if (limit === undefined) throw new Error(`checkPermits: no limit given for semaphore ${name}`);
    // Data losses: empty restarts and killed masters' failovers of the semaphore's node.
    const restarts = faultsFor(name, faults).filter((f) => losesDataOf(f, name));
    const countedUntil = (h: Hold) => Math.min(h.end!, h.lostAt ?? Infinity);
    holds.sort((a, b) => a.start - b.start);
    report.sectionsChecked += holds.length;
    for (const b of holds) {
      const live = holds.filter((a) => a.start <= b.start && countedUntil(a) > b.start);
      const held = live.reduce((sum, a) => sum + a.permits!, 0);
      report.maxHeld = Math.max(report.maxHeld, held);
      if (held <= limit) continue;
      const excuses = new Map<Hold, Excuse>();
      for (const a of live) {
        if (a === b) continue;
        const excuse = excuseOf(a, b.start, restarts, faults, opts);
        if (excuse) excuses.set(a, excuse);
      }
      const unexcused = held - [...excuses.keys()].reduce((sum, a) => sum + a.permits!, 0);
      if (unexcused <= limit) {
        for (const excuse of new Set(excuses.values())) report.excused[excuse]++;
        continue;
      }
      const who = live.map((a) => `${a.id} (${a.permits} from ${a.start}${a.lostAt === undefined ? '' : `, lost at ${a.lostAt}`})`).join(', ');
      report.violations.push({ kind: 'overlap', lock: name, message: `${held} permits of ${limit} held at ${b.start} (${unexcused} not excused by a fault): ${who}` });
    }
  }
  return report;
}

/** Why `a`'s permits may be counted by nobody in Redis when another section began at `at`, if a fault explains it. */
function excuseOf(a: Hold, at: number, restarts: readonly Fault[], faults: readonly Fault[], opts: PermitCheckOptions): Excuse | undefined {
  const told = a.lostAt !== undefined || a.killed === true;
  if (told && restarts.some((f) => f.begin > a.start && f.begin <= at)) return 'dataLoss';
  if (a.lostAt !== undefined && pauseOf(a, at, faults, opts.lease)) return 'pause';
  if (starvedThrough(a, at, opts.loopGaps ?? [], opts.lease)) return 'starved';
  return undefined;
}

export function formatPermitReport(r: PermitReport, limits: Readonly<Record<string, number>>): string {
  const names = Object.entries(limits).map(([name, limit]) => `${name} (limit ${limit})`).join(', ');
  return [
    `semaphore sections checked: ${r.sectionsChecked} over ${names}; most permits held at once: ${r.maxHeld}`,
    `  above the limit, excused by empty restart: ${r.excused.dataLoss}, by pause: ${r.excused.pause}, by a starved holder: ${r.excused.starved}; violations: ${r.violations.length}`,
  ].join('\n');
}
