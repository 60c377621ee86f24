/** What every scenario shares: leases, retry policies, run lengths per mode, scenario names. */

export const LEASE = 30_000; // every implementation: 30 s lease / watchdog timeout
export const POLL_MS = 1; // raw floor under contention: retry every 1 ms
export const PEER_RETRY_MS = 10; // redlock retryDelay, redis-semaphore retryInterval (its default)
export const PEER_RETRY_JITTER = 5; // redlock retryJitter (default 100 would dominate waits)
export const MAX_WAIT_MS = 60_000; // any single acquisition gives up after this
export const MAX_OPS_PER_LOOP = 2_000_000;
export const WATCHDOG_TIMEOUT = 3_000;

export interface Config {
  mode: 'default' | 'quick';
  rounds: number;
  warmMs: number;
  /**
   * Contended scenarios: the same contention, unmeasured, before the measured window
   * (every implementation alike), so that the window shows the steady state of a
   * long-running service rather than a JIT's first second on paths the uncontended
   * warm-up never ran.
   */
  contWarmMs: number;
  seqMs: number;
  parMs: number;
  contMs: number;
  procMs: number;
  quorumMs: number;
  wdLocks: number;
  wdPeriods: number;
  wdCycles: number;
  /** After a run's deadline: time left for in-flight calls; loops still waiting then are abandoned ("stuck"). */
  graceMs: number;
  /** Total time that may be spent measuring disturbed runs again. */
  retryBudgetMs: number;
}

export const DEFAULT_CONFIG: Config = {
  mode: 'default',
  rounds: 3,
  warmMs: 300,
  contWarmMs: 1_000,
  seqMs: 2_000,
  parMs: 2_000,
  contMs: 3_000,
  procMs: 2_500,
  quorumMs: 2_000,
  wdLocks: 10_000,
  wdPeriods: 5,
  wdCycles: 1_000_000,
  graceMs: 2_000,
  retryBudgetMs: 120_000,
};

export const QUICK_CONFIG: Config = {
  mode: 'quick',
  rounds: 1,
  warmMs: 100,
  contWarmMs: 200,
  seqMs: 500,
  parMs: 500,
  contMs: 700,
  procMs: 700,
  quorumMs: 500,
  wdLocks: 2_000,
  wdPeriods: 2,
  wdCycles: 20_000,
  graceMs: 1_000,
  retryBudgetMs: 10_000,
};

export const SCENARIOS = ['uncontended', 'parallel64', 'workers16', 'clients16', 'procs4', 'quorum', 'watchdog', 'readmostly', 'semaphore', 'multi2'] as const;
/** What a run without --only measures (semaphore and multi2 are opt-in: docs/bench.svg charts the single locks). */
export const DEFAULT_SCENARIOS: readonly (typeof SCENARIOS)[number][] = SCENARIOS.filter((s) => s !== 'semaphore' && s !== 'multi2');
export type ScenarioId = (typeof SCENARIOS)[number];
