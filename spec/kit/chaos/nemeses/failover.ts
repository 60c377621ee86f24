/**
 * Sentinel mode's own fault, 'failover': SIGKILL the primary the sentinels name now,
 * wait until they promote a replica, start the old one again (empty) and wait until it
 * serves as a replica, in sync, of the primary the sentinels name then (or, when they
 * have failed back to it, until it is that primary with a replica in sync), so that the
 * next failover has two replicas to choose from again.
 *
 * Without syncReplicas a grant the dead primary had not yet passed on is lost with it,
 * and a second owner gets in: those overlaps are violations, on purpose (a failover
 * excuses nothing). With it (`min` every replica), none is expected: until the old
 * primary is back in sync the new one lacks a replica, and grants and renewals fail.
 */
import { rawCommand } from '../../servers';
import { clusterFailover } from './cluster-failover';
import type { Nemesis } from './nemesis';
import { inSyncWith, oneLine, replication, untilRejoined } from './rejoin';

export const failover: Nemesis = {
  async inject(run) {
    if (run.servers.mode === 'cluster') return clusterFailover(run);
    const t = run.servers.sentinel!;
    const oldPort = await t.currentPrimaryPort();
    const old = t.server(oldPort);
    await old.kill('SIGKILL');
    const begin = Date.now();
    let named = await t.waitFailover(oldPort, { replicas: 1 });
    await old.restart();
    let last = '';
    await untilRejoined(`chaos --sentinel: the old primary (port ${old.port}) back as a replica in sync`, {
      async whole() {
        named = await t.currentPrimaryPort();
        last = await replication(old.port);
        if (named !== old.port) return inSyncWith(last, named);
        const others = run.servers.servers.filter((s) => s.port !== old.port && s.running);
        const infos = await Promise.all(others.map((s) => replication(s.port).catch(() => '')));
        return /role:master/.test(last) && infos.some((info) => inSyncWith(info, old.port));
      },
      // The sentinels turn the returning primary into a replica within seconds, as a rule.
      tell: async () => (named === old.port ? undefined : rawCommand(old.port, ['REPLICAOF', '127.0.0.1', String(named)], 1_000)),
      async detail() {
        const sentinel = await rawCommand(t.sentinels[0]!.port, ['INFO', 'sentinel'], 1_000).catch((e: Error) => e.message);
        return `its INFO replication: ${oneLine(last)}; a sentinel's INFO sentinel: ${oneLine(String(sentinel))}`;
      },
      firstMs: 15_000,
      thenMs: 30_000,
    });
    return { kind: 'failover', master: run.servers.servers.indexOf(old), begin, end: Date.now() };
  },
};
