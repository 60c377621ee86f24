/**
 * This is a shared 2-core machine: a run during which other processes took CPU is
 * measured again (once), while a time budget lasts, and the less disturbed attempt kept.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { machineBusyUs } from './counters';
import { log } from './log';
import type { Cost } from './meter';
import type { RoundRecord } from './results';

/** Runs disturbed by other processes above this are measured again (while the retry budget lasts). */
const FOREIGN_LIMIT = 0.3;
let retryBudgetMs = 0;

export function setRetryBudget(ms: number): void {
  retryBudgetMs = ms;
}

/** CPU used during a run by processes other than ours (Node side and Redis), in cores. */
export function foreignCores(cost: Cost): number {
  return Math.max(0, (cost.machineBusyUs - cost.nodeCpuUs - cost.redisCpuUs) / (cost.ms * 1000));
}

export function foreignNote(cost: Cost): string {
  const f = foreignCores(cost);
  return f > 0.15 ? ` [other processes: ${f.toFixed(2)} cores]` : '';
}

/** Waits (up to maxMs) until other processes use less than FOREIGN_LIMIT cores over 500 ms. */
export async function waitForQuiet(maxMs: number): Promise<void> {
  const until = performance.now() + maxMs;
  while (performance.now() < until) {
    const b0 = machineBusyUs();
    const t0 = performance.now();
    await sleep(500);
    const cores = (machineBusyUs() - b0) / ((performance.now() - t0) * 1000);
    if (!(cores >= FOREIGN_LIMIT)) return; // also when /proc/stat is unavailable (NaN)
  }
}

export interface Measurement {
  rec: RoundRecord;
  samples: number[];
}

/**
 * One measured run, repeated once when other processes on the machine took more than
 * FOREIGN_LIMIT cores during it, while the budget lasts.
 */
export async function measured(what: string, attempt: () => Promise<Measurement>): Promise<Measurement> {
  const t0 = performance.now();
  const first = await attempt();
  const f = foreignCores(first.rec.cost);
  if (!(f > FOREIGN_LIMIT) || retryBudgetMs <= 0) return first;
  log(`${what}: other processes took ${f.toFixed(2)} cores during the run: measuring it again`);
  await waitForQuiet(5_000);
  const second = await attempt();
  retryBudgetMs -= performance.now() - t0;
  second.rec.retried = true;
  return foreignCores(second.rec.cost) < f ? second : first;
}
