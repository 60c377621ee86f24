/** Scenario 1: sequential lock+unlock on one key. */
import type { Env } from '../env';
import type { ScenarioResult } from '../results';
import { CONTRACT_FLOOR } from '../impls/contract-floor';
import { cycleScenario } from './cycle';

export function uncontended(env: Env): Promise<ScenarioResult> {
  return cycleScenario(env, {
    id: 'uncontended',
    title: '1. Uncontended lock+unlock, one key, sequential',
    impls: [...env.impls, CONTRACT_FLOOR],
    ports: [env.single.port],
    admins: [env.admin],
    loops: 1,
    durationMs: env.cfg.seqMs,
  });
}
