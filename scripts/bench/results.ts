/** What a scenario produces: one record per implementation and round, and the summaries over rounds. */
import { foreignCores } from './disturbance';
import type { Family, ImplDef } from './impls/types';
import type { Cost } from './meter';
import { median, percentiles, spread, sum } from './stats';

export interface RoundRecord {
  impl: string;
  round: number;
  opsPerSec: number;
  ops: number;
  errors: number;
  stuck: number;
  cost: Cost;
  /** Operations the cost is divided by. */
  costOps: number;
  perWorker?: number[];
  handoffsPerSec?: number;
  overlaps?: number;
  /** Measured twice: the first attempt was disturbed by other processes (the less disturbed one is kept). */
  retried?: boolean;
}

export interface Summary {
  impl: string;
  label: string;
  family: Family;
  opsPerSec: number;
  opsMin: number;
  opsMax: number;
  ratio: number;
  p50: number;
  p99: number;
  max: number;
  p99Ratio: number;
  rtPerOp: number;
  cmdsPerOp: number;
  evalshaPerOp: number;
  nodeCpuUsPerOp: number;
  cpuRatio: number;
  redisCpuUsPerOp: number;
  errors: number;
  stuck: number;
  /** Most CPU other processes used during one of this implementation's runs, in cores. */
  foreignCoresMax: number;
  // contended only
  perWorkerMin?: number;
  perWorkerMax?: number;
  worstSpread?: number;
  handoffsPerSec?: number;
  overlaps?: number;
}

export interface ScenarioResult {
  id: string;
  title: string;
  kind: 'cycle' | 'contended';
  /** What the latency columns mean. */
  latency: 'cycle' | 'wait';
  floor: string;
  params: Record<string, unknown>;
  summaries: Summary[];
  rounds: RoundRecord[];
}

/** Scenario 6, measured in a child process for one holdfast version. */
export interface WatchdogResult {
  locks: number;
  watchdogTimeoutMs: number;
  acquireMs: number;
  periods: number;
  ticks: number;
  renewals: number;
  evalsha: number;
  redisCmds: number;
  rtPerTick: number;
  renewalsPerTick: number;
  rtPer100Renewals: number;
  nodeCpuMsPerTick: number;
  nodeCpuUsPerRenewal: number;
  nodeCpuMsPerPeriod: number;
  redisCpuMsPerPeriod: number;
  lost: number;
  renewalFailed: number;
  heapBaseBytes: number;
  heapPerHandleBytes: number;
  heapPerHeldLockBytes: number;
  heapAfterRenewalsPerLockBytes: number;
  heapResidualPerLockBytes: number;
  cycles: number;
  cyclesPerSec: number;
  heapSamples: { cycles: number; heapUsed: number }[];
  heapGrowthBytes: number;
  heapGrowthBytesPer1kCycles: number;
}

/** Per implementation: medians over rounds, ratios to the floor of the same round, pooled latency percentiles. */
export function summarize(impls: ImplDef[], floor: string, records: RoundRecord[], samples: Map<string, number[]>): Summary[] {
  const byImpl = (id: string) => records.filter((r) => r.impl === id);
  const floorRecs = byImpl(floor);
  const floorSamples = percentiles(samples.get(floor) ?? []);
  const perOp = (recs: RoundRecord[], pick: (c: Cost) => number) => sum(recs.map((r) => pick(r.cost))) / Math.max(1, sum(recs.map((r) => r.costOps)));
  const floorCpu = perOp(floorRecs, (c) => c.nodeCpuUs);
  return impls.map((impl) => {
    const recs = byImpl(impl.id);
    const ops = recs.map((r) => r.opsPerSec);
    const ratios = recs.map((r) => {
      const f = floorRecs.find((x) => x.round === r.round);
      return f && f.opsPerSec > 0 ? r.opsPerSec / f.opsPerSec : NaN;
    });
    const pct = percentiles(samples.get(impl.id) ?? []);
    const s: Summary = {
      impl: impl.id,
      label: impl.label,
      family: impl.family,
      opsPerSec: median(ops),
      opsMin: Math.min(...ops),
      opsMax: Math.max(...ops),
      ratio: median(ratios),
      ...pct,
      p99Ratio: pct.p99 / floorSamples.p99,
      // '–' in the tables where the counter cannot see the connections (not 0).
      rtPerOp: impl.countsCommands === false ? NaN : perOp(recs, (c) => c.sent),
      cmdsPerOp: perOp(recs, (c) => c.redisCmds),
      evalshaPerOp: perOp(recs, (c) => c.evalsha),
      nodeCpuUsPerOp: perOp(recs, (c) => c.nodeCpuUs),
      cpuRatio: perOp(recs, (c) => c.nodeCpuUs) / floorCpu,
      redisCpuUsPerOp: perOp(recs, (c) => c.redisCpuUs),
      errors: sum(recs.map((r) => r.errors)),
      stuck: sum(recs.map((r) => r.stuck)),
      foreignCoresMax: Math.max(...recs.map((r) => foreignCores(r.cost))),
    };
    if (recs.some((r) => r.perWorker)) {
      // Starvation is judged within a round: min/max of the round with the worst max/min.
      const worst = recs.reduce((a, b) => (spread(b.perWorker ?? []) > spread(a.perWorker ?? []) ? b : a));
      s.perWorkerMin = Math.min(...(worst.perWorker ?? []));
      s.perWorkerMax = Math.max(...(worst.perWorker ?? []));
      s.worstSpread = spread(worst.perWorker ?? []);
      s.handoffsPerSec = median(recs.map((r) => r.handoffsPerSec ?? 0));
      s.overlaps = sum(recs.map((r) => r.overlaps ?? 0));
    }
    return s;
  });
}
