/** Scenario 5: uncontended lock+unlock cycle on 3 independent masters. */
import type { Env } from '../env';
import type { ScenarioResult } from '../results';
import { cycleScenario } from './cycle';

export function quorum(env: Env): Promise<ScenarioResult> {
  return cycleScenario(env, {
    id: 'quorum',
    title: '6. Quorum over 3 masters: uncontended lock+unlock, one key',
    impls: env.quorumImpls,
    ports: env.masters.map((m) => m.port),
    admins: env.masterAdmins,
    loops: 1,
    durationMs: env.cfg.quorumMs,
  });
}
