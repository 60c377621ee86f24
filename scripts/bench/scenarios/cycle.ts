/**
 * Scenarios 1, 2 and 5: `loops` concurrent lock+unlock loops, one key each, in this
 * process; implementations alternate within each round, each on fresh connections.
 */
import type Redis from 'ioredis';
import { LEASE } from '../config';
import { foreignNote, measured } from '../disturbance';
import type { Env } from '../env';
import { inRoundOrder } from '../impls/registry';
import type { ImplDef } from '../impls/types';
import { log } from '../log';
import { cycleLoops } from '../loops';
import { Meter } from '../meter';
import { summarize, type RoundRecord, type ScenarioResult } from '../results';
import { append } from '../stats';
import { closeRunner, openRunner } from '../runners';

export interface CycleScenario {
  id: string;
  title: string;
  impls: ImplDef[];
  ports: number[];
  admins: Redis[];
  loops: number;
  durationMs: number;
}

export async function cycleScenario(env: Env, s: CycleScenario): Promise<ScenarioResult> {
  const { cfg } = env;
  const { id, impls, ports, loops, durationMs } = s;
  const records: RoundRecord[] = [];
  const samples = new Map<string, number[]>(impls.map((i) => [i.id, []]));
  const meter = new Meter(s.admins);
  for (let round = 1; round <= cfg.rounds; round++) {
    for (const impl of inRoundOrder(impls, round)) {
      let attemptNo = 0;
      const { rec, samples: got } = await measured(`${id} round ${round} ${impl.id}`, async () => {
        const names = Array.from({ length: loops }, (_, k) => `${id}:${round}:${++attemptNo}:${k}`);
        const lat: number[] = [];
        const runner = await openRunner(impl, ports);
        try {
          await cycleLoops(runner, names, cfg.warmMs, cfg.graceMs, null);
          await meter.start();
          const r = await cycleLoops(runner, names, durationMs, cfg.graceMs, lat);
          const cost = await meter.stop();
          const rec: RoundRecord = { impl: impl.id, round, opsPerSec: (r.ops / cost.ms) * 1000, ops: r.ops, errors: r.errors, stuck: r.stuck, cost, costOps: r.ops };
          log(`${id} round ${round}/${cfg.rounds} ${impl.id.padEnd(24)} ${Math.round(rec.opsPerSec).toString().padStart(7)} ops/s${r.errors ? `, ${r.errors} errors` : ''}${r.stuck ? `, ${r.stuck} stuck` : ''}${foreignNote(cost)}`);
          return { rec, samples: lat };
        } finally {
          await closeRunner(impl, runner);
        }
      });
      records.push(rec);
      append(samples.get(impl.id)!, got);
    }
  }
  return {
    id,
    title: s.title,
    kind: 'cycle',
    latency: 'cycle',
    floor: impls[0].id,
    params: { loops, durationMs, rounds: cfg.rounds, warmMs: cfg.warmMs, leaseMs: LEASE },
    summaries: summarize(impls, impls[0].id, records, samples),
    rounds: records,
  };
}
