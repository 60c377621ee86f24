/**
 * Scenario 6: one fresh child process (--expose-gc) per holdfast version, the working
 * tree first: heap figures must not mix two versions' module graphs.
 */
import { Child } from '../children';
import type { Env } from '../env';
import { buildRegistry } from '../impls/registry';
import { log } from '../log';
import type { WatchdogResult } from '../results';

export interface WatchdogRun {
  impl: string;
  label: string;
  result: WatchdogResult;
}

export async function watchdog(env: Env): Promise<WatchdogRun[]> {
  const { cfg } = env;
  const runs: WatchdogRun[] = [];
  for (const variant of buildRegistry(env.baseline).holdfastVariants) {
    log(`watchdog ${variant.id}: ${cfg.wdLocks} held locks, then ${cfg.wdCycles.toLocaleString('en-US')} cycles (child process, --expose-gc)`);
    const child = Child.fork({ baseline: env.baseline, execArgv: ['--expose-gc'] });
    try {
      const { result } = await child.request(
        { type: 'watchdog', impl: variant.id, port: env.single.port, locks: cfg.wdLocks, periods: cfg.wdPeriods, cycles: cfg.wdCycles },
        cfg.mode === 'quick' ? 60_000 : 360_000,
      );
      runs.push({ impl: variant.id, label: variant.label, result });
    } finally {
      child.kill();
    }
  }
  return runs;
}
