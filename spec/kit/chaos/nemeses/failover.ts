/**
 * Sentinel mode's own fault, 'failover': SIGKILL the primary the sentinels name now,
 * wait until they promote a replica, start the old one again (empty) and wait until it
 * serves as a replica, in sync, of the primary the sentinels name then (or, when they
 * have failed back to it, until it is that primary with a replica in sync), so that the
 * next failover has two replicas to choose from again.
 *
 * Without syncReplicas a grant the dead primary had not yet passed on is lost with it,
 * and a second owner gets in: those overlaps are violations, on purpose (a failover
 * excuses nothing). With it (`{ min: 1 }`), none is expected.
 */
import { rawCommand } from '../../servers';
import { until } from '../timing';
import { clusterFailover } from './cluster-failover';
import type { Nemesis } from './nemesis';

/** The sentinels turn the returning primary into a replica within seconds, as a rule. */
const REJOIN_TIMEOUT_MS = 15_000;
/** Then it is told to (REPLICAOF), as an operator would, and given this much more. */
const TOLD_REJOIN_TIMEOUT_MS = 30_000;

const inSyncWith = (info: string, primary: number) =>
  /role:slave/.test(info) && new RegExp(`master_port:${primary}\\b`).test(info) && /master_link_status:up/.test(info) && /master_sync_in_progress:0/.test(info);

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
    const role = (port: number) => rawCommand(port, ['INFO', 'replication'], 1_000);
    let last = '';
    let named = newPort;
    const whole = async () => {
      named = await t.currentPrimaryPort();
      last = await role(old.port);
      if (named !== old.port) return inSyncWith(last, named);
      const others = t.replicas.concat(t.primary).filter((s) => s.port !== old.port && s.running);
      const infos = await Promise.all(others.map((s) => role(s.port).catch(() => '')));
      return /role:master/.test(last) && infos.some((info) => inSyncWith(info, old.port));
    };
    const rejoin = `chaos --sentinel: the old primary (port ${old.port}) back as a replica in sync`;
    try {
      await until(rejoin, REJOIN_TIMEOUT_MS, whole);
    } catch {
      if (named !== old.port) await rawCommand(old.port, ['REPLICAOF', '127.0.0.1', String(named)], 1_000).catch(() => undefined);
      await until(rejoin, TOLD_REJOIN_TIMEOUT_MS, whole).catch(async (error: Error) => {
        const sentinel = await rawCommand(t.sentinels[0]!.port, ['INFO', 'sentinel'], 1_000).catch((e: Error) => e.message);
        throw new Error(
          `${error.message} (told to replicate port ${named} after ${REJOIN_TIMEOUT_MS} ms); its INFO replication: ${last.replace(/\r?\n/g, ' ')}; a sentinel's INFO sentinel: ${String(sentinel).replace(/\r?\n/g, ' ')}`,
        );
      });
    }
    return { kind: 'failover', master: run.servers.servers.indexOf(old), begin, end: Date.now() };
  },
};
