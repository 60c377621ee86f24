/**
 * The servers of a chaos run: the Redis the locks live on (one master, quorum masters, a
 * Cluster or a Sentinel set, with or without AOF), the fenced register's own redis-server
 * that no fault touches, and the orchestrator's admin connections. Cluster mode also
 * answers which node serves which lock, and waits until the Cluster is whole again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { clusterSlot } from '../../../lib/store/master/slot';
import { rawCommand, startCluster, startMasters, startServer, type RedisServer, type TestCluster } from '../servers';
import { ServerClock } from '../servers/clock';
import { startSentinelTopology, type SentinelTopology } from '../servers/sentinel';
import { ADMIN_NAME, LOCKS, SEMAPHORE, type Topology } from './options';
import { sleep, withDeadline } from './timing';

const CLUSTER_OK_TIMEOUT_MS = 20_000;

export class ChaosServers {
  admins: Redis[] = [];

  private constructor(
    readonly mode: Topology,
    /** The data servers: masters, Cluster nodes, or Sentinel's primary and replicas (in that order). */
    readonly servers: RedisServer[],
    readonly register: RedisServer,
    readonly cluster: TestCluster | undefined,
    readonly sentinel: SentinelTopology | undefined,
    /** One steppable clock per data server, when asked for (one master or quorum). */
    readonly clocks: ServerClock[] = [],
    private readonly clockDir?: string,
  ) {}

  static async start(mode: Topology, opts: { aof?: boolean; clock?: boolean; replicas?: boolean } = {}): Promise<ChaosServers> {
    const register = await startServer();
    try {
      if (opts.clock) {
        if (mode !== 'single' && mode !== 'quorum') throw new Error('a steppable clock goes with one master or quorum');
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-chaos-clock-'));
        const clocks = Array.from({ length: mode === 'quorum' ? 3 : 1 }, (_, i) => ServerClock.create(fs.mkdtempSync(path.join(dir, `m${i}-`))));
        const servers = await Promise.all(clocks.map((clock) => startServer({ aof: opts.aof, clock })));
        return new ChaosServers(mode, servers, register, undefined, undefined, clocks, dir);
      }
      if (mode === 'cluster') {
        const cluster = await startCluster({ masters: 3, replicas: opts.replicas ? 1 : 0 });
        return new ChaosServers(mode, cluster.nodes, register, cluster, undefined);
      }
      if (mode === 'sentinel') {
        const t = await startSentinelTopology();
        return new ChaosServers(mode, [t.primary, ...t.replicas], register, undefined, t);
      }
      return new ChaosServers(mode, await startMasters(mode === 'quorum' ? 3 : 1, { aof: opts.aof }), register, undefined, undefined);
    } catch (err) {
      await register.stop();
      throw err;
    }
  }

  /** The orchestrator's own connections, one per data server (named, so CLIENT LIST tells them apart). */
  connectAdmins(): void {
    this.admins = this.servers.map((s) => {
      const admin = new Redis({ host: '127.0.0.1', port: s.port, maxRetriesPerRequest: 1, retryStrategy: () => 50, connectionName: ADMIN_NAME });
      admin.on('error', () => undefined);
      return admin;
    });
  }

  /** Cluster mode: node index -> the locks whose slots it serves (CLUSTER SLOTS, asked of any node that answers). */
  async lockOwners(semaphore: boolean): Promise<Map<number, string[]>> {
    let ranges: [number, number, ...[string, number, ...unknown[]][]][] | undefined;
    for (const a of this.admins) {
      ranges = await withDeadline(a.cluster('SLOTS'), 1_000, 'CLUSTER SLOTS').catch(() => undefined);
      if (ranges) break;
    }
    if (!ranges) throw new Error('CLUSTER SLOTS: no node answered');
    const owners = new Map<number, string[]>();
    for (const lock of semaphore ? [...LOCKS, SEMAPHORE.name] : LOCKS) {
      const slot = clusterSlot(`holdfast:{${lock}}`);
      const range = ranges.find(([lo, hi]) => lo <= slot && slot <= hi);
      const node = this.servers.findIndex((s) => s.port === Number(range?.[2][1]));
      if (node < 0) throw new Error(`slot ${slot} of lock ${lock} is served by no node of ours`);
      owners.set(node, [...(owners.get(node) ?? []), lock]);
    }
    return owners;
  }

  /** Cluster mode: CLUSTER NODES as one node (any that answers) sees it: each node's port, role and, for a replica, its master's port. */
  async clusterRoles(): Promise<{ port: number; master: boolean; of?: number; failed: boolean }[]> {
    for (const s of this.servers) {
      const text = await rawCommand(s.port, ['CLUSTER', 'NODES'], 1_000).catch(() => undefined);
      if (!text) continue;
      const lines = text.split('\n').filter(Boolean).map((l) => l.split(' '));
      const portOf = new Map(lines.map((f) => [f[0]!, Number(/:(\d+)@/.exec(f[1]!)?.[1])]));
      return lines.map((f) => ({ port: portOf.get(f[0]!)!, master: f[2]!.includes('master'), of: f[3] === '-' ? undefined : portOf.get(f[3]!), failed: /fail/.test(f[2]!) }));
    }
    throw new Error('CLUSTER NODES: no node answered');
  }

  /** Cluster mode: the indexes (in `servers`) of the nodes that are masters now. */
  async masterIndexes(): Promise<number[]> {
    const masters = new Set((await this.clusterRoles()).filter((r) => r.master && !r.failed).map((r) => r.port));
    return this.servers.flatMap((s, i) => (masters.has(s.port) ? [i] : []));
  }

  /** Bounded: until every node says cluster_state:ok and knows every other, as after startCluster(). */
  async waitClusterOk(): Promise<void> {
    const limit = Date.now() + CLUSTER_OK_TIMEOUT_MS;
    let states: string[] = [];
    while (Date.now() < limit) {
      states = await Promise.all(this.servers.map((s) => rawCommand(s.port, ['CLUSTER', 'INFO'], 1_000).catch((e: Error) => e.message)));
      if (states.every((info) => /cluster_state:ok/.test(info) && Number(/cluster_known_nodes:(\d+)/.exec(info)?.[1]) === this.servers.length)) return;
      await sleep(50);
    }
    throw new Error(`cluster not ok within ${CLUSTER_OK_TIMEOUT_MS} ms of a node restart: ${states.map((s, i) => `node ${i}: ${/cluster_state:\w+/.exec(s)?.[0] ?? s}`).join(', ')}`);
  }

  /**
   * Copies every server's redis.log (data servers, sentinels; each one history across
   * its restarts) into `dir`/servers, named by role and port: the run's log directory
   * then shows what Redis did (promotions, resyncs, +switch-master) next to the history.
   */
  copyLogs(dir: string): void {
    const out = path.join(dir, 'servers');
    fs.mkdirSync(out, { recursive: true });
    const named: [string, RedisServer][] = [
      ...this.servers.map((s): [string, RedisServer] => ['data', s]),
      ...(this.sentinel?.sentinels ?? []).map((s): [string, RedisServer] => ['sentinel', s]),
    ];
    for (const [role, s] of named) {
      try {
        fs.copyFileSync(s.logFile, path.join(out, `${role}-${s.port}.log`));
      } catch {
        // A server that never started has no log: nothing to keep.
      }
    }
  }

  async stop(): Promise<void> {
    for (const a of this.admins) a.disconnect();
    if (this.cluster) await this.cluster.stop();
    else if (this.sentinel) await this.sentinel.stop();
    else await Promise.all(this.servers.map((s) => s.stop()));
    await this.register.stop();
    if (this.clockDir) fs.rmSync(this.clockDir, { recursive: true, force: true });
  }
}
