/**
 * Sentinel mode: every replica SIGSTOPped for 1 to 2 leases, so WAIT gets no
 * acknowledgement: with syncReplicas, grants are given back and renewals fail
 * meanwhile (a loss must be reported by the deadline); without it nothing changes.
 */
import { sleep } from '../timing';
import type { Nemesis } from './nemesis';

export const replicaLag: Nemesis = {
  async inject(run) {
    const t = run.servers.sentinel!;
    const primary = await t.currentPrimaryPort();
    const replicas = run.servers.servers.filter((s) => s.port !== primary && s.running);
    for (const r of replicas) r.pause();
    const begin = Date.now();
    await sleep(run.rng.int(run.lease, run.lease * 2));
    for (const r of replicas) r.resume();
    return { kind: 'replicaLag', begin, end: Date.now() };
  },
};
