/** Scenario 2: 64 concurrent loops, each on its own key. */
import type { Env } from '../env';
import type { ScenarioResult } from '../results';
import { CONTRACT_FLOOR } from '../impls/contract-floor';
import { cycleScenario } from './cycle';

export function parallel64(env: Env): Promise<ScenarioResult> {
  return cycleScenario(env, {
    id: 'parallel64',
    title: '2. 64 keys in parallel (64 concurrent loops, one key each)',
    impls: [...env.impls, CONTRACT_FLOOR],
    ports: [env.single.port],
    admins: [env.admin],
    loops: 64,
    durationMs: env.cfg.parMs,
  });
}
