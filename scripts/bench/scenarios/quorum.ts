/** Scenario 5: uncontended lock+unlock cycle on 3 independent masters. */
import type { Env } from '../env';
import type { ScenarioResult } from '../results';
import { CONTRACT_FLOOR } from '../impls/contract-floor';
import { cycleScenario } from './cycle';

export function quorum(env: Env): Promise<ScenarioResult> {
  return cycleScenario(env, {
    id: 'quorum',
    title: '6. Quorum over 3 masters: uncontended lock+unlock, one key',
    impls: [...env.quorumImpls, CONTRACT_FLOOR],
    ports: env.masters.map((m) => m.port),
    admins: env.masterAdmins,
    loops: 1,
    durationMs: env.cfg.quorumMs,
  });
}
