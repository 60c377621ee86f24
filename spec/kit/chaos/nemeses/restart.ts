/**
 * SIGKILL of one Redis (a master, a Cluster node) and a start on the same port. Without
 * persistence it comes back EMPTY ('restart': the locks it served are gone, which
 * excuses overlaps on them); with AOF (appendfsync always) it comes back with every
 * write it acknowledged ('aofRestart', which excuses nothing). Quorum mode: one master
 * at a time (the others keep the majority). Cluster mode: one node, which loses the
 * locks of its slots only; the next fault waits until the Cluster is whole again.
 */
import type { Fault } from '../faults';
import type { ChaosRun, Nemesis } from './nemesis';

async function restartOne(run: ChaosRun, kind: 'restart' | 'aofRestart'): Promise<Fault> {
  const { servers } = run.servers;
  const master = run.rng.int(0, servers.length - 1);
  const server = servers[master]!;
  const clustered = run.servers.mode === 'cluster';
  const locks = clustered ? ((await run.servers.lockOwners(run.semaphore)).get(master) ?? []) : undefined;
  await server.kill('SIGKILL');
  const begin = Date.now();
  await server.restart();
  // The node is back when the cluster serves its slots again, not when it answers PING.
  if (clustered) await run.servers.waitClusterOk();
  return { kind, master, locks, begin, end: Date.now() };
}

export const restart: Nemesis = { inject: (run) => restartOne(run, 'restart') };
export const aofRestart: Nemesis = { inject: (run) => restartOne(run, 'aofRestart') };
