/** The markdown table of one scenario, and of the watchdog scenario. */
import type { ScenarioResult, WatchdogResult } from '../results';
import type { WatchdogRun } from '../scenarios/watchdog';
import { f, fi, fx, mdTable } from './format';

export function scenarioTable(s: ScenarioResult): string {
  if (s.kind === 'cycle') {
    return mdTable(
      ['implementation', 'ops/s', '× floor', 'ops/s range', 'p50 ms', 'p99 ms', 'p99 × floor', 'RT/cycle', 'Redis cmds/cycle', 'Node CPU µs/cycle', 'CPU × floor', 'Redis CPU µs/cycle', 'errors'],
      s.summaries.map((x) => [
        x.label,
        fi(x.opsPerSec),
        fx(x.ratio),
        `${fi(x.opsMin)}–${fi(x.opsMax)}`,
        f(x.p50, 3),
        f(x.p99, 3),
        fx(x.p99Ratio),
        f(x.rtPerOp),
        f(x.cmdsPerOp, 1),
        f(x.nodeCpuUsPerOp, 1),
        fx(x.cpuRatio),
        f(x.redisCpuUsPerOp, 1),
        `${x.errors}${x.stuck ? ` (${x.stuck} stuck)` : ''}`,
      ]),
    );
  }
  return mdTable(
    ['implementation', 'CS/s', '× floor', 'wait p50 ms', 'p99 ms', 'max ms', 'CS per worker min–max (worst round)', 'max/min', 'handoffs/s', 'RT/CS', 'Node CPU µs/CS', 'errors (stuck)', 'overlaps'],
    s.summaries.map((x) => [
      x.label,
      fi(x.opsPerSec),
      fx(x.ratio),
      f(x.p50, 3),
      f(x.p99, 2),
      f(x.max, 1),
      `${fi(x.perWorkerMin ?? NaN)}–${fi(x.perWorkerMax ?? NaN)}`,
      f(x.worstSpread ?? NaN),
      fi(x.handoffsPerSec ?? NaN),
      f(x.rtPerOp),
      f(x.nodeCpuUsPerOp, 1),
      `${x.errors}${x.stuck ? ` (${x.stuck})` : ''}`,
      String(x.overlaps ?? 0),
    ]),
  );
}

function watchdogRows(w: WatchdogResult): [string, string][] {
  const kb = (b: number) => `${(b / 1024).toFixed(2)} KB`;
  return [
    ['held locks / watchdogTimeout', `${w.locks.toLocaleString('en-US')} / ${w.watchdogTimeoutMs} ms (renewal every ${Math.round(w.watchdogTimeoutMs / 3)} ms)`],
    ['acquiring them (200 in flight)', `${fi(w.acquireMs)} ms`],
    ['measured', `${w.periods} renewal periods: ${w.ticks} ticks, ${w.renewals.toLocaleString('en-US')} renewals, ${w.evalsha} EVALSHA`],
    ['Redis round trips per tick', f(w.rtPerTick, 1)],
    ['renewals per tick', fi(w.renewalsPerTick)],
    ['round trips per 100 renewals', f(w.rtPer100Renewals, 3)],
    ['Node CPU per tick', `${f(w.nodeCpuMsPerTick, 2)} ms (${f(w.nodeCpuUsPerRenewal, 2)} µs per renewal; ${f(w.nodeCpuMsPerPeriod, 1)} ms per period)`],
    ['Redis CPU per period', `${f(w.redisCpuMsPerPeriod, 1)} ms`],
    ['lost / renewalFailed', `${w.lost} / ${w.renewalFailed}`],
    ['heap per Lock handle (getLock)', kb(w.heapPerHandleBytes)],
    ['heap per held lock (incl. its handle)', kb(w.heapPerHeldLockBytes)],
    ['  … after renewals', kb(w.heapAfterRenewalsPerLockBytes)],
    ['  … left after unlock of all (handles dropped)', kb(w.heapResidualPerLockBytes)],
    ['lock+unlock cycles (64 keys in parallel)', `${w.cycles.toLocaleString('en-US')} at ${fi(w.cyclesPerSec)}/s`],
    ['heap after gc, first → last segment', `${(w.heapSamples[1]?.heapUsed / 1048576).toFixed(2)} → ${(w.heapSamples[w.heapSamples.length - 1].heapUsed / 1048576).toFixed(2)} MB`],
    ['heap growth after warm-up', `${(w.heapGrowthBytes / 1024).toFixed(1)} KB (slope ${f(w.heapGrowthBytesPer1kCycles, 1)} B per 1k cycles)`],
  ];
}

/** One value column per holdfast version ('value' when there is only the working tree). */
export function watchdogTable(runs: WatchdogRun[]): string {
  const columns = runs.map((r) => watchdogRows(r.result));
  const headers = runs.length === 1 ? ['metric', 'value'] : ['metric', ...runs.map((r) => r.label)];
  return mdTable(headers, columns[0].map(([metric], i) => [metric, ...columns.map((c) => c[i][1])]));
}
