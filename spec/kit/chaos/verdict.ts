/**
 * The end of a chaos run: reads the workers' logs, runs every checker over them (the
 * history: mutual exclusion, tokens, losses; the fenced register; the waits; the
 * semaphore's permits) and writes the summary.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ALL_FAULT_KINDS, type Fault, type FaultKind } from './faults';
import { buildHolds, checkHistory, ghostViolations, grantedBeforePause, heapTrend, loopGaps, type HeapTrend, type LogRecord, type Report } from './history';
import { formatReport } from './history-format';
import { SEMAPHORE, type ChaosOptions } from './options';
import { checkPermits, formatPermitReport, type PermitReport } from './permits';
import type { Violation } from './records';
import { checkRegister, formatRegisterReport, type RegisterReport } from './register-check';
import { checkWaits, formatWaitReport, type WaitReport } from './waits-check';

export interface Verdict {
  report: Report;
  register: RegisterReport;
  waits: WaitReport;
  permits: PermitReport | undefined;
  heap: HeapTrend | undefined;
  faultsByKind: Partial<Record<FaultKind, number>>;
}

/** One log file per worker process; a line cut by a kill is skipped. */
export function readLogs(logDir: string): { records: LogRecord[]; perProcess: LogRecord[][] } {
  const records: LogRecord[] = [];
  const perProcess: LogRecord[][] = [];
  for (const file of fs.readdirSync(logDir).filter((f) => f.endsWith('.jsonl'))) {
    const start = records.length;
    for (const line of fs.readFileSync(path.join(logDir, file), 'utf8').split('\n')) {
      if (!line) continue;
      let rec: LogRecord | { type: 'note' };
      try {
        rec = JSON.parse(line) as LogRecord | { type: 'note' };
      } catch {
        continue; // the line in flight when its worker was killed
      }
      if (rec.type !== 'note') records.push(rec);
    }
    perProcess.push(records.slice(start));
  }
  return { records, perProcess };
}

/** How late a wait's timers may run on a loaded machine, past what its loop gaps show (ms). */
export const WAIT_SLACK = 100;

export function judge(logDir: string, faults: readonly Fault[], opts: ChaosOptions, lease: number, masters: number, runViolations: readonly Violation[]): Verdict {
  const { records, perProcess } = readLogs(logDir);
  const gaps = loopGaps(records);
  const holds = buildHolds(records, faults);
  // A Cluster is one master per lock: its restarts carry the locks they lost instead.
  const report = checkHistory(holds, faults, { lease, masters: opts.mode === 'quorum' ? masters : 1, loopGaps: gaps });
  const register = checkRegister(holds.map((h) => grantedBeforePause(h, faults, lease, 50)));
  // DESIGN "Waiting": a wait ends within its budget plus one command bound (each wait
  // logs its bound), here with WAIT_SLACK for timers on a loaded machine.
  const waits = checkWaits(records, { slack: WAIT_SLACK, faults, loopGaps: gaps, starvedAfterMs: 10 * lease });
  const limits = { [SEMAPHORE.name]: SEMAPHORE.limit };
  const permits = opts.semaphore ? checkPermits(holds, faults, { lease, limits, loopGaps: gaps }) : undefined;
  report.violations.push(...ghostViolations(records), ...register.violations, ...waits.violations, ...(permits?.violations ?? []), ...runViolations);
  const faultsByKind = Object.fromEntries(ALL_FAULT_KINDS.flatMap((k) => {
    const n = faults.filter((f) => f.kind === k).length;
    return n > 0 ? [[k, n]] : [];
  })) as Partial<Record<FaultKind, number>>;
  return { report, register, waits, permits, heap: heapTrend(perProcess), faultsByKind };
}

export function summarize(v: Verdict, faults: readonly Fault[], head: { title: string; seed: number; proxied: string; logs: string }): string {
  const { heap } = v;
  return [
    `${head.title}; seed ${head.seed}`,
    formatReport(v.report, faults),
    formatRegisterReport(v.register),
    formatWaitReport(v.waits),
    ...(v.permits ? [formatPermitReport(v.permits, { [SEMAPHORE.name]: SEMAPHORE.limit })] : []),
    head.proxied,
    heap ? `heap after GC of the longest-lived worker, over its last ${heap.spanS} s: ${heap.firstMB} MB -> ${heap.lastMB} MB (largest ${heap.maxMB} MB)` : 'heap: no worker lived long enough for two samples',
    `logs: ${head.logs}`,
  ].join('\n');
}
