/**
 * Sentinel mode's own fault, 'failover': SIGKILL the primary the sentinels name now,
 * wait until they promote a replica, start the old one again (empty) and wait until it
 * serves as a replica of the new primary, in sync, so that the next failover has two
 * replicas to choose from again.
 *
 * Without syncReplicas a grant the dead primary had not yet passed on is lost with it,
 * and a second owner gets in: those overlaps are violations, on purpose (a failover
 * excuses nothing). With it (`{ min: 1 }`), none is expected.
 */
import { rawCommand } from '../../servers';
import { until } from '../timing';
import { clusterFailover } from './cluster-failover';
import type { Nemesis } from './nemesis';

export const failover: Nemesis = {
  async inject(run) {
    if (run.servers.mode === 'cluster') return clusterFailover(run);
    const t = run.servers.sentinel!;
    const oldPort = await t.currentPrimaryPort();
    const old = t.server(oldPort);
    await old.kill('SIGKILL');
    const begin = Date.now();
    const newPort = await t.waitFailover(oldPort, { replicas: 1 });
    await old.restart();
    // Sentinel turns the returning old primary into a replica of the new one.
    await until('chaos --sentinel: the old primary back as a replica in sync', 60_000, async () => {
      const info = await rawCommand(old.port, ['INFO', 'replication'], 1_000);
      return /role:slave/.test(info) && new RegExp(`master_port:${newPort}\\b`).test(info) && /master_link_status:up/.test(info);
    });
    return { kind: 'failover', master: run.servers.servers.indexOf(old), begin, end: Date.now() };
  },
};
