/**
 * `npm run chaos -- --report`: one chaos run per deployment mode, the results table
 * written into docs/safety.md between its markers. A mode is 'safe' when the safety
 * claim says no two holders can exist there beyond the faults the checker excuses (an
 * empty restart, a pause or starvation longer than the lease, each reported to the
 * holder, with its late writes fenced off); any violation there fails the report. The
 * unsafe modes (Sentinel without syncReplicas: a failover loses grants not yet
 * replicated; a server clock stepped forward: leases end early) and the one whose server clock is stepped show their overlaps as what they are.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import type { ChaosOptions, ChaosResult } from './options';
import { runChaos } from './run';

export interface ReportMode {
  name: string;
  /** The same run on the command line (with --seed and --minutes). */
  flags: string;
  opts: ChaosOptions;
  /** Any violation fails the report: the claim says no two holders beyond what the checker excuses (told, fenced). */
  safe: boolean;
  /** The claim in the table's words (docs/safety.md says it in full). */
  claim: string;
}

export const REPORT_MODES: readonly ReportMode[] = [
  { name: 'one master, no persistence', claim: 'safe; two holders after an empty restart (told, fenced)', flags: '', opts: { mode: 'single' }, safe: true },
  { name: 'one master, AOF (fsync always)', claim: 'safe', flags: '--aof', opts: { mode: 'single', aof: true }, safe: true },
  { name: 'quorum (3 masters)', claim: 'safe; two holders if a majority restarts empty', flags: '--quorum --multi', opts: { mode: 'quorum', multi: true }, safe: true },
  { name: 'Cluster (3 masters)', claim: 'safe; two holders after a node\'s empty restart', flags: '--cluster --semaphore', opts: { mode: 'cluster', semaphore: true }, safe: true },
  { name: 'fair lock, Cluster', claim: 'safe; two holders after a node\'s empty restart', flags: '--cluster --fair', opts: { mode: 'cluster', fair: true }, safe: true },
  { name: 'Cluster with replicas, failover', claim: 'safe; two holders after a failover of a killed master (told)', flags: '--cluster --replicas', opts: { mode: 'cluster', replicas: true }, safe: true },
  { name: 'semaphore, one master', claim: 'safe; over the limit after an empty restart', flags: '--semaphore', opts: { mode: 'single', semaphore: true }, safe: true },
  { name: 'read-write lock, one master', claim: 'safe; two holders after an empty restart', flags: '--rw', opts: { mode: 'single', readWrite: true }, safe: true },
  { name: 'multi-lock, one master', claim: 'safe; two holders after an empty restart', flags: '--multi', opts: { mode: 'single', multi: true }, safe: true },
  { name: 'Sentinel, syncReplicas (min: both replicas)', claim: 'safe', flags: '--sentinel --sync-replicas', opts: { mode: 'sentinel', syncReplicas: true }, safe: true },
  { name: 'Sentinel, no syncReplicas', claim: 'unsafe: failover loses grants', flags: '--sentinel', opts: { mode: 'sentinel' }, safe: false },
  { name: 'one master, clock steps', claim: 'unsafe: leases end early', flags: '--clock', opts: { mode: 'single', clock: true }, safe: false },
];

export const BEGIN = '<!-- chaos-report:begin -->';
export const END = '<!-- chaos-report:end -->';

export interface ReportRow {
  mode: ReportMode;
  result: ChaosResult;
}

const count = (o: Record<string, number>) =>
  Object.entries(o)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || '0';

function row({ mode, result: r }: ReportRow): string {
  const byClass: Record<string, number> = {};
  for (const v of r.violations) byClass[v.kind] = (byClass[v.kind] ?? 0) + 1;
  const e = r.report.excused;
  const cells = [
    mode.name,
    mode.claim,
    `\`${[`--seed ${r.seed}`, mode.flags].filter(Boolean).join(' ')}\``,
    String(r.report.sectionsChecked + (r.permits?.sectionsChecked ?? 0)),
    count(r.faultsByKind as Record<string, number>),
    count({ restart: e.dataLoss, failover: e.failover, pause: e.pause, starved: e.starved }),
    count(byClass),
    `${r.report.lostHolds} (longest ${r.report.detection.maxDelayMs} ms)`,
    String(r.register.fencedOffLate),
    `${r.waits.worstOverBudgetMs} ms (${r.waits.worstPastBoundMs} ms)`,
    String(r.leftovers),
  ];
  return `| ${cells.join(' | ')} |`;
}

export function machine(): string {
  const cpus = os.cpus();
  let redis = 'redis-server ?';
  try {
    redis = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
  } catch {
    // reported as unknown
  }
  return `${cpus[0]?.model.trim() ?? 'unknown CPU'} x ${cpus.length}, ${os.platform()} ${os.release()}, Node ${process.version}, ${redis}`;
}

export function table(rows: readonly ReportRow[], meta: { date: string; seed: number; seconds: number }): string {
  return [
    `Run of ${meta.date} on ${machine()}: ${meta.seconds} s per mode, base seed ${meta.seed}; a row's options replay its run (\`npm run chaos -- OPTIONS --minutes N\`). Regenerate: \`npm run chaos -- --report --minutes 5\`.`,
    '',
    '| mode | claim | options | sections | faults by kind | two holders, excused (by) | violations by class | losses reported (longest detection) | late writes fenced off | worst wait past budget (past budget + command bound) | leftovers |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(row),
  ].join('\n');
}

/** Puts `text` between the markers of `file`. */
export function writeBetweenMarkers(file: string, text: string): void {
  const doc = fs.readFileSync(file, 'utf8');
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${file} has no ${BEGIN} ... ${END} markers`);
  fs.writeFileSync(file, `${doc.slice(0, a + BEGIN.length)}\n${text}\n${doc.slice(b)}`);
}

/** Runs every mode in turn; the violations of safe modes decide the exit code. */
export async function runReport(opts: { durationMs: number; seed: number; file: string; verbose?: boolean; modes?: readonly ReportMode[] }): Promise<{ rows: ReportRow[]; failed: string[] }> {
  const rows: ReportRow[] = [];
  const modes = opts.modes ?? REPORT_MODES;
  for (const [i, mode] of modes.entries()) {
    if (opts.verbose) process.stderr.write(`\n=== ${mode.name} (${i + 1}/${modes.length}) ===\n`);
    const result = await runChaos({ ...mode.opts, durationMs: opts.durationMs, seed: opts.seed + i, verbose: opts.verbose });
    process.stdout.write(`${result.summary}\n\n`);
    rows.push({ mode, result });
  }
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  writeBetweenMarkers(opts.file, table(rows, { date, seed: opts.seed, seconds: Math.round(opts.durationMs / 1000) }));
  return { rows, failed: rows.filter((r) => r.mode.safe && r.result.violations.length > 0).map((r) => r.mode.name) };
}
