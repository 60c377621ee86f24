/**
 * --baseline: each holdfast implementation next to its twin at the baseline ref, in
 * the same rounds against the same floor. "now ÷ baseline" is the median over rounds of
 * the two throughputs of one round, so drift between rounds cancels out.
 */
import type { ImplDef } from '../impls/types';
import type { ScenarioResult } from '../results';
import { median } from '../stats';
import { f, fx, mdTable } from './format';

export function baselineTable(results: ScenarioResult[], impls: ImplDef[]): string | undefined {
  const rows: string[][] = [];
  for (const s of results) {
    for (const base of s.summaries) {
      const twinOf = impls.find((i) => i.id === base.impl)?.twinOf;
      const now = twinOf === undefined ? undefined : s.summaries.find((x) => x.impl === twinOf);
      if (!now) continue;
      const perRound = s.rounds
        .filter((r) => r.impl === now.impl)
        .map((r) => {
          const b = s.rounds.find((x) => x.impl === base.impl && x.round === r.round);
          return b && b.opsPerSec > 0 ? r.opsPerSec / b.opsPerSec : NaN;
        });
      const p99 = s.latency === 'wait' ? 'p99 wait ms' : 'p99 ms';
      rows.push([
        s.id,
        `${now.label} vs ${base.label}`,
        fx(now.ratio),
        fx(base.ratio),
        fx(median(perRound)),
        `${f(now.p99, 3)} vs ${f(base.p99, 3)} (${p99})`,
        `${f(now.rtPerOp)} vs ${f(base.rtPerOp)}`,
        `${f(now.nodeCpuUsPerOp, 1)} vs ${f(base.nodeCpuUsPerOp, 1)}`,
      ]);
    }
  }
  if (rows.length === 0) return undefined;
  return mdTable(['scenario', 'working tree vs baseline', '× floor now', '× floor baseline', 'now ÷ baseline (ops/s)', 'p99', 'RT/op', 'Node CPU µs/op'], rows);
}
