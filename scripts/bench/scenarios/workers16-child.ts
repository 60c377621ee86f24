/** Child side of scenario 3: the whole run, server counters through its own admin connection. */
import { connect, quitAll } from '../impls/connect';
import type { Registry } from '../impls/registry';
import type { ReplyBodies, RequestOf } from '../ipc';
import { contendedLoops, cycleLoops } from '../loops';
import { Meter } from '../meter';
import { closeRunner, openRunner } from '../runners';

export async function contendedInChild(registry: Registry, m: RequestOf<'contended'>): Promise<ReplyBodies['contended']> {
  const impl = registry.byId(m.impl);
  const admin = await connect(m.port);
  const runner = await openRunner(impl, [m.port]);
  try {
    await cycleLoops(runner, [m.name], m.warmMs, m.graceMs, null);
    const meter = new Meter([admin]);
    await meter.start();
    const run = await contendedLoops(runner, m.name, m.workers, m.durationMs, 0, m.graceMs);
    const cost = await meter.stop();
    return { run, cost };
  } finally {
    await closeRunner(impl, runner);
    await quitAll([admin]);
  }
}
