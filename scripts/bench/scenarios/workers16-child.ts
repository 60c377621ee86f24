/** Child side of scenarios 3 and 4 (workers16, clients16): the whole run, server counters through its own admin connection. */
import { connect, quitAll } from '../impls/connect';
import type { Registry } from '../impls/registry';
import type { ReplyBodies, RequestOf } from '../ipc';
import { contendedLoops, cycleLoops } from '../loops';
import { Meter } from '../meter';
import { closeRunner, openRunner } from '../runners';

export async function contendedInChild(registry: Registry, m: RequestOf<'contended'>): Promise<ReplyBodies['contended']> {
  const impl = registry.byId(m.impl);
  const admin = await connect(m.port);
  const runners = await Promise.all(Array.from({ length: m.clients }, () => openRunner(impl, [m.port])));
  try {
    // Warm-up uncontended, each client on its own key (connections, scripts).
    await Promise.all(runners.map((r, i) => cycleLoops(r, [`${m.name}:warm:${i}`], m.warmMs, m.graceMs, null)));
    // Then the same contention on another key, unmeasured (see Config.contWarmMs).
    if (m.contWarmMs > 0) await contendedLoops(runners, `${m.name}:warm`, m.workers, m.contWarmMs, 0, m.graceMs);
    const meter = new Meter([admin]);
    await meter.start();
    const run = await contendedLoops(runners, m.name, m.workers, m.durationMs, 0, m.graceMs);
    const cost = await meter.stop();
    return { run, cost };
  } finally {
    await Promise.all(runners.map((r) => closeRunner(impl, r)));
    await quitAll([admin]);
  }
}
