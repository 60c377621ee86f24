/**
 * The waits' history: every wait ends in an outcome the contract allows (held,
 * LockTimeoutError, LockUnavailableError; tryLock's `false` is the same as a timeout),
 * none ends later than DESIGN "Waiting" allows (its budget plus one command bound, the
 * wait's `bound`), but for `slack` of timer lateness and the time its process could not
 * run meanwhile (a pause, a blocked loop, a starved process: its loop gaps), and, with
 * read-write locks, writers get in against a constant flow of readers (as Curator's
 * testWriterAgainstConstantReaders). Pure.
 */
import type { Fault } from './faults';
import type { LogRecord, LoopGap, Violation, WaitKind, WaitOutcome } from './records';

type WaitRecord = Extract<LogRecord, { type: 'wait' }>;

export interface WaitReport {
  waits: number;
  byOutcome: Record<WaitOutcome, number>;
  /** The longest a wait took past its budget (ms, 0 if none did), and which. */
  worstOverBudgetMs: number;
  worst?: string;
  /**
   * The longest a wait took past its budget plus its command bound (ms, 0 if none did),
   * less the time its process could not run meanwhile: what the contract's bound is
   * checked against (with `slack`), and which wait.
   */
  worstPastBoundMs: number;
  worstPastBound?: string;
  /** Read-write locks: writers' waits that got in, and that timed out. */
  writers: { held: number; timedOut: number };
  violations: Violation[];
}

export interface WaitCheckOptions {
  /** How late timers may run on the machine (ms): a wait may end this much past its budget plus its bound. */
  slack: number;
  faults: readonly Fault[];
  loopGaps: readonly LoopGap[];
  /**
   * Writers starve when, for this long, one writer's wait or another was timing out on a
   * name (their waits cover the stretch, gaps under SLACK) and none got in. Faults can
   * hold a name for a few leases (a paused holder, a fixed lease), so this is several.
   */
  starvedAfterMs: number;
}

export function checkWaits(records: readonly LogRecord[], opts: WaitCheckOptions): WaitReport {
  const waits = records.filter((r): r is WaitRecord => r.type === 'wait').sort((a, b) => a.start - b.start);
  const report: WaitReport = { waits: waits.length, byOutcome: { held: 0, timeout: 0, unavailable: 0, other: 0 }, worstOverBudgetMs: 0, worstPastBoundMs: 0, writers: { held: 0, timedOut: 0 }, violations: [] };
  const stopped = (w: WaitRecord) => opts.faults.some((f) => (f.kind === 'pause' || f.kind === 'loopStall') && f.pid === w.pid && f.begin < w.at && f.end > w.start);
  // The time the wait's process ran nothing during the wait: its timers ran that late.
  const unrun = (w: WaitRecord) => opts.loopGaps.reduce((sum, g) => (g.pid === w.pid && g.from < w.at && g.to > w.start ? sum + Math.min(g.to, w.at) - Math.max(g.from, w.start) : sum), 0);
  for (const w of waits) {
    report.byOutcome[w.outcome]++;
    const what = `${w.kind} wait for ${w.lock} by worker ${w.worker} (pid ${w.pid}) from ${w.start}`;
    if (w.outcome === 'other') report.violations.push({ kind: 'wait', lock: w.lock, message: `${what} ended in ${w.error ?? 'an error'} after ${w.at - w.start} ms: not an outcome the contract allows` });
    if (stopped(w)) continue;
    const over = w.at - w.start - w.budget;
    if (over > report.worstOverBudgetMs) {
      report.worstOverBudgetMs = over;
      report.worst = what;
    }
    const past = over - w.bound - unrun(w);
    if (past > report.worstPastBoundMs) {
      report.worstPastBoundMs = past;
      report.worstPastBound = `${what}, bound ${w.bound} ms`;
    }
    if (past > opts.slack) report.violations.push({ kind: 'wait', lock: w.lock, message: `${what} took ${w.at - w.start} ms of a ${w.budget} ms budget (${w.outcome}): ${past} ms past the budget plus one command bound (${w.bound} ms), beyond what its process could not run` });
  }
  // A writer whose worker's connections were slowed, stalled or reset during its wait
  // joined the queue (and heartbeat) late, by up to the fault: a reader that called later
  // may have been there first.
  const lineFault = (w: WaitRecord) => opts.faults.some((f) => (f.kind === 'latency' || f.kind === 'stall' || f.kind === 'drop') && f.worker === w.worker && f.begin < w.at && f.end > w.start);
  report.violations.push(...writerStarvation(waits, report, opts.starvedAfterMs, (w) => stopped(w) || unrun(w) > UNRUN || lineFault(w)));
  return report;
}

/** Two writer waits a worker makes one after the other leave a gap of its pause between turns (sections.ts: up to 30 ms) and a busy loop's delay. */
const SLACK = 250;

/** How long after its call a writer's wait has joined the queue (its first attempt's round trip, on a loaded machine). */
const JOINED = 50;
/** A writer whose process ran nothing for longer than this during its wait may have missed its heartbeats: its place was not its own throughout. */
const UNRUN = 200;

/**
 * Read-write locks: a stretch covered by writer waits that timed out on one name, with no
 * writer getting in, longer than `starvedAfterMs`, in which a reader of another process
 * that came after a waiting writer got in before that writer's deadline, while the writer's
 * process ran (DESIGN: once a writer waits, new readers wait behind it). Writers that time
 * out behind readers who were there first, whose place lapsed while their process was
 * stopped, whose connections were slowed or cut (their place came late), or whose leave
 * let the readers behind them in, are not starved by the lock.
 */
function writerStarvation(waits: readonly WaitRecord[], report: WaitReport, starvedAfterMs: number, notRunning: (w: WaitRecord) => boolean): Violation[] {
  const out: Violation[] = [];
  const writes = waits.filter((w) => w.kind === ('write' satisfies WaitKind));
  for (const name of new Set(writes.map((w) => w.lock))) {
    const mine = writes.filter((w) => w.lock === name);
    const readsIn = waits.filter((r) => r.lock === name && r.kind === ('read' satisfies WaitKind) && r.outcome === 'held');
    let stretch: WaitRecord[] = [];
    const passed = () =>
      readsIn.find((r) => stretch.some((w) => r.pid !== w.pid && r.start > w.start + JOINED && r.at < w.start + w.budget && !notRunning(w)));
    const held = mine.filter((w) => w.outcome === 'held').map((w) => w.at);
    report.writers.held += held.length;
    const timedOut = mine.filter((w) => w.outcome === 'timeout');
    report.writers.timedOut += timedOut.length;
    let from: number | undefined;
    let to = -Infinity;
    let count = 0;
    const close = () => {
      const reader = from !== undefined && to - from > starvedAfterMs ? passed() : undefined;
      if (reader && from !== undefined) {
        out.push({ kind: 'wait', lock: name, message: `from ${from} to ${to} (${to - from} ms) ${count} writer waits for ${name} timed out one after another and no writer got in, while a reader that came after a waiting writer got in (at ${reader.at}): writer starvation` });
      }
    };
    for (const w of timedOut) {
      // A stretch ends at a gap in the waits, or where a writer got in.
      if (from === undefined || w.start > to + SLACK || held.some((at) => at > from! && at < w.at)) {
        close();
        from = w.start;
        to = w.at;
        count = 1;
        stretch = [w];
      } else {
        to = Math.max(to, w.at);
        count++;
        stretch.push(w);
      }
    }
    close();
  }
  return out;
}

export function formatWaitReport(r: WaitReport): string {
  const outcomes = Object.entries(r.byOutcome).map(([k, v]) => `${k} ${v}`).join(', ');
  const writers = r.writers.held + r.writers.timedOut > 0 ? `; writers held ${r.writers.held}, timed out ${r.writers.timedOut}` : '';
  return `waits: ${r.waits} (${outcomes})${writers}; worst past its budget: ${r.worstOverBudgetMs} ms${r.worst ? ` (${r.worst})` : ''}; worst past its budget plus one command bound: ${r.worstPastBoundMs} ms${r.worstPastBound ? ` (${r.worstPastBound})` : ''}; violations: ${r.violations.length}`;
}
