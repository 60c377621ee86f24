/** Opening and closing an implementation with bounds, so one that hangs cannot hang the run. */
import { withTimeout } from './async';
import type { ImplDef, Runner } from './impls/types';
import { noteError } from './log';

export async function openRunner(impl: ImplDef, ports: number[]): Promise<Runner> {
  return withTimeout(impl.open(ports), 20_000, `open ${impl.id}`);
}

/** Never throws: a failed close is tallied. */
export async function closeRunner(impl: ImplDef, runner: Runner): Promise<void> {
  await withTimeout(runner.close(), 10_000, `close ${impl.id}`).catch((e) => noteError(`close ${impl.id}`, e));
}
