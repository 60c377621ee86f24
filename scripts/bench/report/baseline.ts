/**
 * --baseline: each holdfast implementation next to its twin at the baseline ref, in
 * the same rounds against the same floor. "now ÷ baseline" compares the two throughputs
 * of each round (drift between rounds cancels) and takes the geometric mean over the
 * rounds: the two swap places every other round, and over an even number of rounds
 * the mean cancels what running second gains or loses (see inRoundOrder).
 */
import type { ImplDef } from '../impls/types';
import type { ScenarioResult } from '../results';
import { f, fx, mdTable } from './format';

function geometricMean(ratios: number[]): number {
  const ok = ratios.filter((r) => r > 0 && Number.isFinite(r));
  return ok.length === 0 ? NaN : Math.exp(ok.reduce((a, r) => a + Math.log(r), 0) / ok.length);
}

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
        fx(geometricMean(perRound)),
        `${f(now.p99, 3)} vs ${f(base.p99, 3)} (${p99})`,
        `${f(now.rtPerOp)} vs ${f(base.rtPerOp)}`,
        `${f(now.nodeCpuUsPerOp, 1)} vs ${f(base.nodeCpuUsPerOp, 1)}`,
      ]);
    }
  }
  if (rows.length === 0) return undefined;
  return mdTable(['scenario', 'working tree vs baseline', '× floor now', '× floor baseline', 'now ÷ baseline (ops/s, geometric mean of rounds)', 'p99', 'RT/op', 'Node CPU µs/op'], rows);
}
