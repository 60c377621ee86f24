/**
 * A Redis Cluster of test servers: masters, each with `replicas` replicas (none by
 * default), slots spread by `redis-cli --cluster create`, ready once every node says
 * cluster_state:ok and every replica is in sync with its master.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { HOST, freePort } from './ports';
import { rawCommand } from './resp';
import { LocalRedisServer, type RedisServer } from './server';
import { deadline, delay, tail } from './timing';
import { live, makeTmpDir, removeTmpDir } from './tracking';
import { assertCount, startAll } from './start-all';

export interface TestCluster {
  /** Every node: the masters first, then the replicas (as `--cluster create` assigns them at the start; failovers swap roles). */
  nodes: RedisServer[];
  startupNodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

const CLUSTER_READY_TIMEOUT_MS = 20_000;

export async function startCluster(opts: { masters?: number; replicas?: number } = {}): Promise<TestCluster> {
  const masters = opts.masters ?? 3;
  const replicas = opts.replicas ?? 0;
  // redis-cli --cluster create refuses fewer than 3 masters.
  assertCount('startCluster({ masters })', masters, 3);
  if (!Number.isInteger(replicas) || replicas < 0) throw new RangeError(`startCluster({ replicas }) must be a whole number >= 0, got ${replicas}`);
  const clusterDir = makeTmpDir('holdfast-cluster-');
  const startNode = async (index: number): Promise<LocalRedisServer> => {
    const dir = path.join(clusterDir, `node-${index}`);
    // An explicit bus port: the default (port + 10000) overflows 65535 for
    // most ephemeral ports. It stays fixed across restarts (nodes.conf has it).
    const clusterArgs = (busPort: number): string[] => [
      '--cluster-enabled', 'yes',
      '--cluster-config-file', path.join(dir, 'nodes.conf'),
      '--cluster-node-timeout', '2000',
      // A replica takes over from a failed master however long its link had been down
      // (a master restarted just before, a loaded host): the specs test the lock across
      // a failover, not Redis's refusal to promote a replica it deems too stale.
      '--cluster-replica-validity-factor', '0',
      '--cluster-port', String(busPort),
    ];
    const node = new LocalRedisServer({
      port: await freePort(),
      args: clusterArgs(await freePort()),
      dir,
      ownsDir: false,
      repick: async (c) => {
        c.port = await freePort();
        c.args = clusterArgs(await freePort());
      },
    });
    live.add(node);
    try {
      await node.start();
    } catch (err) {
      await node.stop();
      throw err;
    }
    return node;
  };

  let nodes: LocalRedisServer[] = [];
  const cluster: TestCluster = {
    nodes,
    startupNodes: [],
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      removeTmpDir(clusterDir);
      live.delete(cluster);
    },
  };
  live.add(cluster);
  try {
    nodes = await startAll(Array.from({ length: masters * (1 + replicas) }, (_, i) => startNode(i)));
    cluster.nodes = nodes;
    cluster.startupNodes = nodes.map((n) => ({ host: HOST, port: n.port }));
    await createCluster(nodes, replicas);
    await waitClusterOk(nodes);
    if (replicas > 0) await waitReplicasInSync(nodes);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

function createCluster(nodes: RedisServer[], replicas: number): Promise<void> {
  // The first nodes.length / (1 + replicas) become the masters, the others their replicas.
  const args = ['--cluster', 'create', ...nodes.map((n) => `${HOST}:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'];
  return new Promise((resolve, reject) => {
    execFile('redis-cli', args, { timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`redis-cli --cluster create failed: ${err.message}\n${tail(`${stdout}\n${stderr}`, 20)}`));
      else resolve();
    });
  });
}

/** cluster_state:ok and every node known everywhere, so clients get a complete slot map. */
async function waitClusterOk(nodes: RedisServer[]): Promise<void> {
  const limit = deadline(CLUSTER_READY_TIMEOUT_MS);
  let last = '';
  try {
    while (!limit.expired) {
      const states = await Promise.all(
        nodes.map((n) => rawCommand(n.port, ['CLUSTER', 'INFO'], 1_000).catch((e: Error) => e.message)),
      );
      const ok = states.every(
        (s) => /cluster_state:ok/.test(s) && Number(/cluster_known_nodes:(\d+)/.exec(s)?.[1]) === nodes.length,
      );
      if (ok) return;
      last = states.map((s, i) => `${nodes[i]!.port}: ${/cluster_state:\w+/.exec(s)?.[0] ?? s}`).join(', ');
      await delay(50);
    }
  } finally {
    limit.cancel();
  }
  throw new Error(`cluster not ok within ${CLUSTER_READY_TIMEOUT_MS} ms (${last})`);
}

/** Every replica's link to its master is up and it has finished its first sync. */
export async function waitReplicasInSync(nodes: readonly RedisServer[]): Promise<void> {
  const limit = deadline(CLUSTER_READY_TIMEOUT_MS);
  let last = '';
  try {
    while (!limit.expired) {
      const infos = await Promise.all(nodes.map((n) => rawCommand(n.port, ['INFO', 'replication'], 1_000).catch((e: Error) => e.message)));
      const lagging = infos.filter((info) => /role:slave/.test(info) && !(/master_link_status:up/.test(info) && /master_sync_in_progress:0/.test(info)));
      if (lagging.length === 0 && infos.every((info) => /role:/.test(info))) return;
      last = `${lagging.length} replica(s) not in sync`;
      await delay(50);
    }
  } finally {
    limit.cancel();
  }
  throw new Error(`cluster replicas not in sync within ${CLUSTER_READY_TIMEOUT_MS} ms (${last})`);
}
