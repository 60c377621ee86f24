/**
 * Cluster with a replica per master, 'failover': the master serving a lock (mostly the
 * main lock, the most contended) hands its slots to its replica, one of three ways:
 * - killed: SIGKILL of the master; the Cluster promotes its replica once the master has
 *   been unreachable for cluster-node-timeout (2 s here). Redis replicates
 *   asynchronously and holdfast sends no WAIT in a Cluster, so a grant (or a renewal, or
 *   a fencing counter's increment) the replica had not received is lost with the old
 *   master: a second owner may get in, told to the first at its next renewal. The old
 *   master is started again (empty, its nodes.conf kept) and rejoins as a replica.
 * - forced: CLUSTER FAILOVER FORCE on the replica: it takes over without waiting for its
 *   master, which takes writes until it hears of it (milliseconds here) and then becomes
 *   a replica, dropping them: what it granted meanwhile is lost, as with a killed master.
 * - manual: CLUSTER FAILOVER on the replica (a planned switch): the master stops taking
 *   writes until the replica has caught up, then the replica takes over. Nothing is lost.
 * The fault ends once the pair is whole again, the old master a replica of the new one
 * in sync (or, when the failover came undone, the other way round), and the Cluster is
 * ok (the next failover has a replica again).
 */
import { rawCommand } from '../../servers';
import type { Fault } from '../faults';
import { LOCKS } from '../options';
import { until } from '../timing';
import type { ChaosRun } from './nemesis';
import { inSyncWith, oneLine, replication, untilRejoined } from './rejoin';

const PROMOTION_TIMEOUT_MS = 30_000;
/** A manual or forced failover not done by then is asked for again. */
const ASK_AGAIN_MS = 8_000;
/** The old master's own return as a replica (seconds, as a rule), then after CLUSTER REPLICATE. */
const REJOIN_TIMEOUT_MS = 10_000;
const TOLD_REJOIN_TIMEOUT_MS = 30_000;
const REPLICA_TIMEOUT_MS = 15_000;

export async function clusterFailover(run: ChaosRun): Promise<Fault> {
  const { servers } = run.servers;
  const owners = await run.servers.lockOwners(run.semaphore);
  const name = run.rng.next() < 0.7 ? LOCKS[0]! : run.rng.pick(LOCKS);
  const from = [...owners].find(([, locks]) => locks.includes(name))![0];
  const old = servers[from]!;
  // The Cluster's view of who replicates whom settles a moment after a previous failover
  // or restart: wait for the replica (bounded) rather than fail the run on a stale view.
  type Role = Awaited<ReturnType<typeof run.servers.clusterRoles>>[number];
  let found: Role | undefined;
  await until(`chaos --cluster --replicas: node ${from} (port ${old.port}) serves ${name} and has a replica in sync`, REPLICA_TIMEOUT_MS, async () => {
    found = (await run.servers.clusterRoles()).find((r) => !r.master && !r.failed && r.of === old.port);
    return found !== undefined;
  });
  const replica = found as Role | undefined;
  if (!replica) throw new Error(`chaos --cluster --replicas: node ${from} (port ${old.port}) serves ${name} but has no replica in sync`);
  const how = run.rng.pick(['killed', 'forced', 'manual'] as const);
  const killed = how === 'killed';
  const begin = Date.now();
  const ask = () => rawCommand(replica.port, how === 'forced' ? ['CLUSTER', 'FAILOVER', 'FORCE'] : ['CLUSTER', 'FAILOVER'], 1_000);
  if (killed) await old.kill('SIGKILL');
  else await ask();
  // A requested failover the replica gave up (a manual one aborts when the replica has
  // not caught up within cluster-mf-timeout; on a loaded host either can miss its
  // window) is asked for again: the fault is a failover, and its window (begin..end)
  // covers every ask.
  let askedAt = Date.now();
  let seen = '';
  await until(`chaos --cluster --replicas: the replica on port ${replica.port} promoted`, PROMOTION_TIMEOUT_MS, async () => {
    seen = await replication(replica.port);
    if (/role:master/.test(seen)) return true;
    if (!killed && Date.now() - askedAt >= ASK_AGAIN_MS) {
      askedAt = Date.now();
      await ask().catch(() => undefined);
    }
    return false;
  }).catch((e: Error) => {
    throw new Error(`${e.message} (${how}); its INFO replication: ${oneLine(seen)}`);
  });
  if (killed) await old.restart();
  // The old master turns replica once it hears of the new master's newer epoch. When it has
  // not within REJOIN_TIMEOUT_MS, it is told to (CLUSTER REPLICATE), as an operator would.
  // A pair whose failover came undone (the old master serves again, the replica follows
  // it in sync) is whole too. The run fails only if neither is true after that.
  let last = '';
  await untilRejoined(`chaos --cluster --replicas: the old master (port ${old.port}) and its replica (port ${replica.port}) a pair in sync again`, {
    async whole() {
      last = await replication(old.port);
      return inSyncWith(last, replica.port) || (/role:master/.test(last) && inSyncWith(await replication(replica.port), old.port));
    },
    async tell() {
      const newMaster = String(await rawCommand(replica.port, ['CLUSTER', 'MYID'], 1_000));
      return rawCommand(old.port, ['CLUSTER', 'REPLICATE', newMaster], 1_000);
    },
    detail: async () => `its INFO replication: ${oneLine(last)}`,
    firstMs: REJOIN_TIMEOUT_MS,
    thenMs: TOLD_REJOIN_TIMEOUT_MS,
  });
  await run.servers.waitClusterOk();
  return { kind: 'failover', master: from, locks: owners.get(from) ?? [], how, begin, end: Date.now() };
}
