/**
 * Chaos checker: tries to break holdfast's mutual exclusion.
 *
 *   npm run chaos                 # ~75 s
 *   npm run chaos -- --minutes 5  # longer
 *   npm run chaos -- --quorum     # 3 independent masters (quorum mode)
 *   npm run chaos -- --cluster    # a 3-master Redis Cluster
 *   npm run chaos -- --semaphore  # workers also take 1-3 permits of semaphore 'sem' (limit 5):
 *     at most 5 held at once (spec/kit/chaos/permits.ts); with a single Redis or --cluster
 *   npm run chaos -- --rw         # read-write locks (with --cluster too): workers read or write;
 *                                 # never a reader and a writer at once, at most one writer
 *   npm run chaos -- --fair       # workers take fair locks (getFairLock; one Redis or --cluster):
 *                                 # queue order, grants by the release to the queue's head
 *   npm run chaos -- --multi      # workers also take multi-locks over 2 of the names (any mode but
 *                                 # --rw); each name's section is checked as that lock's. With
 *                                 # restarts it can report a false overlap: a name taken first,
 *                                 # before an empty restart, is dated by the section's start
 *                                 # (after it); use --faults kill,pause,scriptFlush,stall,drop
 *   npm run chaos -- --sentinel [--sync-replicas]   # primary, 2 replicas, 3 sentinels; failovers (spec/kit/chaos/sentinel.ts)
 *   options: --workers N --tasks N --seconds N --faults kill,pause,restart,scriptFlush,stall,drop --keep-logs
 *   HOLDFAST_CHAOS_TRACE=1 npm run chaos -- --keep-logs   # workers also log each hold's
 *     acquired/released/lost events by owner, which owner each section is, and why a
 *     nested run() failed: enough to follow a violation back to the call that caused it
 *
 * Starts its own redis-server (free port, 127.0.0.1, never 6379), a TcpProxy per
 * worker in front of it, and worker processes (spec/kit/chaos/worker.ts) that take locks
 * over and over and log every critical section to a JSONL file. Meanwhile it injects
 * faults, one at a time and logged with timestamps: SIGKILL of a worker (respawned),
 * SIGSTOP/SIGCONT of a worker for longer than the lease, empty restart of Redis,
 * SCRIPT FLUSH, a stalled connection (the worker's proxy blackholes for longer
 * than the lease, then resets its connections), and dropped connections (replies
 * lost for up to 100 ms, then a reset, three times: ioredis resends the unanswered
 * commands, so scripts the server already ran run twice). Workers also reenter locks they hold, and log any renewal of a
 * lock none of their sections holds (a hold that outlived its release). At the end: leak checks (no lock keys
 * left but `:fence` counters, no pub/sub channels, workers exit by themselves after
 * close), then the history is checked (spec/kit/chaos/history.ts) and a summary printed.
 * Exit code 0 only with zero violations.
 *
 * Quorum mode: one proxy per worker and master; a restart empties one master at a time.
 * Cluster mode: 3 masters, no replicas; each worker has one proxy per node and an
 * ioredis Cluster whose natMap sends every node address (from CLUSTER SLOTS, redirects,
 * the sharded subscribers) to that worker's proxy, which CLIENT LIST on the nodes
 * confirms twice per run. A restart SIGKILLs one node and starts it empty with its
 * nodes.conf (same slots); the next fault waits until every node says cluster_state:ok
 * (about 2 s: a restarted master refuses writes that long). It excuses data loss only for
 * the locks whose slots that node serves. SCRIPT FLUSH hits every node; the leak check
 * also looks for shard channels (SSUBSCRIBE) on every node.
 *
 * All times are Date.now() of one machine, shared by every process of the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { rawCommand, startCluster, startMasters, type RedisServer, type TestCluster } from '../servers';
import { startSentinelTopology, type SentinelTopology } from '../servers/sentinel';
import { CHAOS_SYNC_REPLICAS, dataServers, failover } from './sentinel';
import { clusterSlot } from '../../../lib/store/master/slot';
import { TcpProxy } from '../proxy';
import {
  FAULT_KINDS,
  SENTINEL_FAULT_KINDS,
  buildHolds,
  checkHistory,
  ghostViolations,
  heapTrend,
  loopGaps,
  type HeapTrend,
  formatReport,
  type Fault,
  type FaultKind,
  type LogRecord,
  type Report,
  type Violation,
} from './history';
import { checkPermits, formatPermitReport } from './permits';
import type { WorkerConfig } from './worker';

export interface ChaosOptions {
  durationMs?: number;
  /**
   * 'quorum': 3 independent masters; a restart empties one of them at a time.
   * 'cluster': a 3-master Redis Cluster; a restart empties one node (the locks it serves).
   */
  mode?: 'single' | 'quorum' | 'cluster' | 'sentinel';
  /** Sentinel mode: the workers' LockClient uses syncReplicas (CHAOS_SYNC_REPLICAS). */
  syncReplicas?: boolean;
  workers?: number;
  tasks?: number;
  watchdogTimeout?: number;
  /** Pause between two faults, ms. */
  faultGap?: [number, number];
  /** Kinds of fault to inject (default: all). */
  faults?: FaultKind[];
  /** Workers take read-write locks (getReadWriteLock), reading or writing; not with quorum mode. */
  readWrite?: boolean;
  /** Workers take fair locks (getFairLock); not with quorum mode, --rw or --multi. */
  fair?: boolean;
  /** Progress lines on stderr. */
  verbose?: boolean;
  /** Keep the log directory even when the run is clean. */
  keepLogs?: boolean;
  /** Workers also take permits of a semaphore (not in quorum mode, which has none). */
  semaphore?: boolean;
  /** Workers also take multi-locks over two of the lock names (getMultiLock), checked per name. */
  multi?: boolean;
}

export interface ChaosResult {
  report: Report;
  faults: Fault[];
  faultsByKind: Record<FaultKind, number>;
  violations: Violation[];
  summary: string;
  /** Client connections that CLIENT LIST showed on the servers (all must come through a worker's proxy). */
  clientsChecked: { clients: number; shardSubscribers: number };
  /** Heap after GC of the longest-lived worker, when it lived long enough for two samples. */
  heap: HeapTrend | undefined;
  logDir: string;
}

const ROOT = path.resolve(__dirname, '../../..');
const LOCKS = ['main', 'aux-1', 'aux-2'];
/** The semaphore of --semaphore runs. */
const SEMAPHORE = { name: 'sem', limit: 5 };
/** The name of the orchestrator's own connections, which CLIENT LIST may show unproxied. */
const ADMIN_NAME = 'chaos-admin';
const CLUSTER_OK_TIMEOUT_MS = 20_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const rand = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));

interface Slot {
  index: number;
  /** One per Redis master (Cluster node), all owned here: the worker connects to these only. */
  proxies: TcpProxy[];
  gen: number;
  child?: ChildProcess;
  exited?: Promise<number | null>;
  ready?: Promise<void>;
  closed?: Promise<void>;
  /** We killed it on purpose: its exit is not a crash. */
  expectedExit: boolean;
  output: string;
  /** The worker's LockClient id, the first half of the owner ids it writes. */
  clientId?: string;
}

export async function runChaos(opts: ChaosOptions = {}): Promise<ChaosResult> {
  const durationMs = opts.durationMs ?? 75_000;
  const workers = opts.workers ?? 3;
  const tasks = opts.tasks ?? 3;
  const lease = opts.watchdogTimeout ?? 800;
  const [gapLo, gapHi] = opts.faultGap ?? [800, 2_000];
  const say = (text: string) => {
    if (opts.verbose) process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 23)}] ${text}\n`);
  };

  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-chaos-'));
  const faults: Fault[] = [];
  const violations: Violation[] = [];
  const slots: Slot[] = [];
  const quorum = opts.mode === 'quorum';
  const clustered = opts.mode === 'cluster';
  const sentinel = opts.mode === 'sentinel';
  let cluster: TestCluster | undefined;
  let topology: SentinelTopology | undefined;
  let servers: RedisServer[] = [];
  /** Client connections seen by CLIENT LIST, and those of them that were ioredis's sharded subscribers. */
  const proxied = { clients: 0, shardSubscribers: 0 };
  let admins: Redis[] = [];

  const spawnWorker = (slot: Slot): void => {
    slot.gen += 1;
    slot.expectedExit = false;
    const config: WorkerConfig = {
      worker: slot.index,
      gen: slot.gen,
      ports: slot.proxies.map((p) => p.port),
      clusterNodes: clustered ? servers.map((s) => s.port) : undefined,
      sentinel: topology ? { addresses: topology.sentinelAddresses, name: topology.name } : undefined,
      syncReplicas: sentinel && opts.syncReplicas ? CHAOS_SYNC_REPLICAS : undefined,
      log: path.join(logDir, `worker-${slot.index}.${slot.gen}.jsonl`),
      tasks,
      locks: LOCKS,
      watchdogTimeout: lease,
      semaphore: opts.semaphore ? SEMAPHORE : undefined,
      readWrite: opts.readWrite,
      fair: opts.fair,
      multi: opts.multi,
    };
    const child = spawn(
      process.execPath,
      ['--expose-gc', '-r', 'tsx/cjs', 'spec/kit/chaos/worker.ts', JSON.stringify(config)],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
    );
    slot.child = child;
    slot.output = '';
    const collect = (chunk: Buffer) => {
      slot.output = (slot.output + chunk.toString()).slice(-4_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const gen = slot.gen;
    slot.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (!slot.expectedExit) {
          violations.push({ kind: 'worker', message: `worker ${slot.index} gen ${gen} (pid ${child.pid}) exited unexpectedly: code ${code} signal ${signal}\n${slot.output}` });
        }
        resolve(code);
      });
    });
    slot.ready = new Promise((resolve) => {
      const onMessage = (m: unknown) => {
        if (typeof m === 'object' && m !== null && 'ready' in m) {
          child.off('message', onMessage);
          slot.clientId = String((m as { ready: unknown }).ready);
          resolve();
        }
      };
      child.on('message', onMessage);
    });
    slot.closed = new Promise((resolve) => {
      const onMessage = (m: unknown) => {
        if (m === 'closed') {
          child.off('message', onMessage);
          resolve();
        }
      };
      child.on('message', onMessage);
    });
    child.on('error', () => undefined);
  };

  const record = (f: Fault) => {
    faults.push(f);
    const where = f.worker !== undefined ? ` worker ${f.worker}` : f.locks !== undefined ? ` node ${f.master} (${f.locks.join(', ') || 'no lock'})` : '';
    say(`${f.kind}${where} ${f.end - f.begin} ms`);
  };

  /**
   * Every client connection on every node came through one of the workers' proxies
   * (or is the orchestrator's own): else a stall would not cut that worker off. Only
   * called when no rawCommand() connection of the orchestrator may still be open.
   */
  const checkProxied = async (when: string): Promise<void> => {
    // Sentinel mode has no proxies: the workers follow the sentinels to the primary.
    if (sentinel) return;
    const viaProxy = () => slots.flatMap((s) => s.proxies.flatMap((p) => p.upstreamPorts));
    const before = viaProxy();
    const lists = await Promise.all(admins.map((a) => withDeadline(a.client('LIST') as Promise<string>, 2_000, 'CLIENT LIST')));
    const known = new Set([...before, ...viaProxy()]);
    lists.forEach((list, node) => {
      for (const line of list.split('\n').filter(Boolean)) {
        const name = / name=(\S*)/.exec(line)?.[1] ?? '';
        if (name === ADMIN_NAME) continue;
        const addr = / addr=(\S+)/.exec(line)?.[1] ?? '?';
        proxied.clients++;
        if (name.includes('ssubscriber')) proxied.shardSubscribers++;
        if (!known.has(Number(addr.split(':').pop()))) {
          violations.push({ kind: 'proxy', message: `${when}: client ${addr} of ${clustered ? 'node' : 'master'} ${node} did not come through a worker's proxy (${line.trim()})` });
        }
      }
    });
  };

  /** Cluster mode: node index -> the locks whose slots it serves (CLUSTER SLOTS, asked of any node that answers). */
  const lockOwners = async (): Promise<Map<number, string[]>> => {
    let ranges: [number, number, ...[string, number, ...unknown[]][]][] | undefined;
    for (const a of admins) {
      ranges = await withDeadline(a.cluster('SLOTS'), 1_000, 'CLUSTER SLOTS').catch(() => undefined);
      if (ranges) break;
    }
    if (!ranges) throw new Error('CLUSTER SLOTS: no node answered');
    const owners = new Map<number, string[]>();
    for (const lock of opts.semaphore ? [...LOCKS, SEMAPHORE.name] : LOCKS) {
      const slot = clusterSlot(`holdfast:{${lock}}`);
      const range = ranges.find(([lo, hi]) => lo <= slot && slot <= hi);
      const node = servers.findIndex((s) => s.port === Number(range?.[2][1]));
      if (node < 0) throw new Error(`slot ${slot} of lock ${lock} is served by no node of ours`);
      owners.set(node, [...(owners.get(node) ?? []), lock]);
    }
    return owners;
  };

  /** Bounded: until every node says cluster_state:ok and knows every other, as after startCluster(). */
  const waitClusterOk = async (): Promise<void> => {
    const limit = Date.now() + CLUSTER_OK_TIMEOUT_MS;
    let states: string[] = [];
    while (Date.now() < limit) {
      states = await Promise.all(servers.map((s) => rawCommand(s.port, ['CLUSTER', 'INFO'], 1_000).catch((e: Error) => e.message)));
      if (states.every((info) => /cluster_state:ok/.test(info) && Number(/cluster_known_nodes:(\d+)/.exec(info)?.[1]) === servers.length)) return;
      await sleep(50);
    }
    throw new Error(`cluster not ok within ${CLUSTER_OK_TIMEOUT_MS} ms of a node restart: ${states.map((s, i) => `node ${i}: ${/cluster_state:\w+/.exec(s)?.[0] ?? s}`).join(', ')}`);
  };

  /** Mostly the worker that holds the main lock right now (a fault there matters most), else any. */
  const target = async (): Promise<Slot> => {
    if (Math.random() < 0.8) {
      const owners = (
        await Promise.all(admins.map((a) => withDeadline(a.hkeys(`holdfast:{${LOCKS[0]}}`), 500, 'hkeys').catch(() => [] as string[])))
      ).flat();
      const holder = slots.find((s) => owners.some((o) => s.clientId !== undefined && o.startsWith(`${s.clientId}:`)));
      if (holder) return holder;
    }
    return slots[Math.floor(Math.random() * slots.length)]!;
  };

  const inject = async (kind: FaultKind): Promise<void> => {
    const slot = kind === 'restart' || kind === 'scriptFlush' ? slots[0]! : await target();
    switch (kind) {
      case 'kill': {
        await slot.ready;
        const child = slot.child!;
        slot.expectedExit = true;
        child.kill('SIGKILL');
        const begin = Date.now();
        await slot.exited;
        record({ kind, worker: slot.index, pid: child.pid, begin, end: Date.now() });
        spawnWorker(slot);
        return;
      }
      case 'pause': {
        await slot.ready;
        const child = slot.child!;
        child.kill('SIGSTOP');
        const begin = Date.now();
        await sleep(rand(Math.round(lease * 1.5), Math.round(lease * 2.5)));
        child.kill('SIGCONT');
        record({ kind, worker: slot.index, pid: child.pid, begin, end: Date.now() });
        return;
      }
      case 'stall': {
        // The worker is cut off from every master.
        for (const p of slot.proxies) p.blackhole();
        const begin = Date.now();
        await sleep(rand(Math.round(lease * 1.2), Math.round(lease * 2.2)));
        // Drop before forwarding again: what the blackhole swallowed leaves the old
        // connections out of step. All in one tick, so no connection slips in between.
        for (const p of slot.proxies) {
          p.drop();
          p.resume();
        }
        record({ kind, worker: slot.index, begin, end: Date.now() });
        return;
      }
      case 'drop': {
        // Replies lost for a moment, then the connections reset, three times: the
        // server ran commands it never answered, and ioredis resends them after
        // reconnecting, so those scripts run twice. Nothing may be counted twice.
        const begin = Date.now();
        for (let i = 0; i < 3; i++) {
          for (const p of slot.proxies) p.loseReplies();
          await sleep(rand(20, 100));
          for (const p of slot.proxies) {
            p.drop();
            p.resume();
          }
          await sleep(rand(20, 100));
        }
        record({ kind, worker: slot.index, begin, end: Date.now() });
        return;
      }
      case 'restart': {
        // Quorum mode: one master at a time (the others keep the majority).
        // Cluster mode: one node, which loses the locks of its slots only.
        const master = Math.floor(Math.random() * servers.length);
        const server = servers[master]!;
        const locks = clustered ? ((await lockOwners()).get(master) ?? []) : undefined;
        await server.kill('SIGKILL');
        const begin = Date.now();
        await server.restart();
        // The node is back when the cluster serves its slots again, not when it answers PING.
        if (clustered) await waitClusterOk();
        record({ kind, master, locks, begin, end: Date.now() });
        return;
      }
      case 'failover': {
        record(await failover(topology!));
        return;
      }
      case 'scriptFlush': {
        const begin = Date.now();
        await Promise.all(servers.map((s) => rawCommand(s.port, ['SCRIPT', 'FLUSH'])));
        record({ kind, begin, end: Date.now() });
        return;
      }
    }
  };

  try {
    if (clustered) {
      cluster = await startCluster({ masters: 3 });
      servers = cluster.nodes;
    } else if (sentinel) {
      topology = await startSentinelTopology();
      servers = dataServers(topology);
    } else servers = await startMasters(quorum ? 3 : 1);
    say(`redis-server ${servers.map((s) => `pid ${s.pid} port ${s.port}`).join(', ')}${quorum ? ' (quorum mode)' : clustered ? ' (Cluster nodes)' : ''}; logs in ${logDir}`);
    for (let i = 0; i < workers; i++) {
      const proxies = sentinel ? [] : await Promise.all(servers.map((s) => TcpProxy.start({ host: '127.0.0.1', port: s.port })));
      slots.push({ index: i, proxies, gen: 0, expectedExit: false, output: '' });
    }
    for (const slot of slots) spawnWorker(slot);
    await withDeadline(Promise.all(slots.map((s) => s.ready)), 30_000, 'workers did not start');
    admins = servers.map((s) => {
      const admin = new Redis({ host: '127.0.0.1', port: s.port, maxRetriesPerRequest: 1, retryStrategy: () => 50, connectionName: ADMIN_NAME });
      admin.on('error', () => undefined);
      return admin;
    });
    say(`${workers} workers x ${tasks} tasks running for ${Math.round(durationMs / 1000)} s`);

    // Faults, one at a time: first each kind once (in random order), then at random.
    const until = Date.now() + durationMs;
    const kinds = opts.faults ?? (sentinel ? SENTINEL_FAULT_KINDS : FAULT_KINDS);
    const plan = [...kinds].sort(() => Math.random() - 0.5);
    await sleep(Math.min(1_000, durationMs / 10));
    if (clustered) {
      const owners = await lockOwners();
      say(`locks by node: ${[...owners].sort().map(([node, locks]) => `node ${node}: ${locks.join(', ')}`).join('; ')}`);
    }
    await checkProxied('before the first fault');
    while (plan.length > 0 || Date.now() < until - lease * 3) {
      const kind = plan.shift() ?? kinds[Math.floor(Math.random() * kinds.length)]!;
      await inject(kind);
      await sleep(rand(gapLo, gapHi));
    }
    const rest = until - Date.now();
    if (rest > 0) await sleep(rest);
    // After every fault, with the reconnections and redirects they caused.
    await checkProxied('after the last fault');

    // Stop: workers finish their holds, close their LockClient and report 'closed'.
    say('stopping workers');
    await Promise.all(slots.map((s) => s.ready));
    for (const s of slots) s.child!.send('stop');
    const closedAll = await withDeadline(Promise.all(slots.map((s) => s.closed)), 20_000, 'close').then(
      () => true,
      () => false,
    );
    if (!closedAll) violations.push({ kind: 'exit', message: 'a worker did not finish its holds and close within 20 s of stop' });

    // Leak check, while the workers' connections are still open: no lock keys (those of
    // killed workers expire within a lease), no pub/sub channels.
    let leftover: string[] = [];
    // A killed waiter's place in a queue (and the queue with it) lives up to two heartbeat
    // leases (the watchdogTimeout, `lease` here: scripts/_queue.lua), as a killed holder's key lives one lease.
    const leakDeadline = Date.now() + lease * 2 + 1_000;
    const allKeys = async () => (await Promise.all(admins.map((a, i) => a.keys('holdfast:*').then((ks) => ks.map((k) => `${i}:${k}`))))).flat();
    for (;;) {
      leftover = (await allKeys()).filter((k) => !k.endsWith(':fence'));
      if (leftover.length === 0 || Date.now() > leakDeadline) break;
      await sleep(100);
    }
    if (leftover.length > 0) violations.push({ kind: 'leak', message: `lock keys left after close (master:key): ${leftover.join(', ')}` });
    let channelCount = 0;
    for (const [i, admin] of admins.entries()) {
      // Sentinel mode: the sentinels' own channel (__sentinel__:hello) is not ours.
      const channels = (await admin.pubsub('CHANNELS', 'holdfast:*')) as string[];
      channelCount += channels.length;
      if (channels.length > 0) violations.push({ kind: 'leak', message: `pub/sub channels left after close on master ${i}: ${channels.join(', ')}` });
      const numsub = (await admin.pubsub('NUMSUB', ...LOCKS.flatMap((l) => [`holdfast:{${l}}:ch`, `holdfast:{${l}}:next`]))) as (string | number)[];
      for (let j = 0; j < numsub.length; j += 2) {
        if (Number(numsub[j + 1]) > 0) violations.push({ kind: 'leak', message: `${numsub[j]} still has ${numsub[j + 1]} subscriber(s) on master ${i}` });
      }
      if (clustered) channelCount += await shardLeaks(admin, i, violations);
    }
    const fences = (await allKeys()).filter((k) => k.endsWith(':fence')).length;
    say(`leak check done: ${leftover.length} lock keys, ${channelCount} channels, ${fences} fence counters`);

    // Exit: each worker drops its connection and IPC channel and must then exit by itself.
    for (const s of slots) {
      s.expectedExit = true;
      s.child!.send('exit');
    }
    await Promise.all(
      slots.map(async (s) => {
        const code = await withDeadline(s.exited!, 5_000, 'exit').catch(() => 'timeout' as const);
        if (code !== 0) {
          violations.push({ kind: 'exit', message: `worker ${s.index} gen ${s.gen} ${code === 'timeout' ? 'did not exit by itself within 5 s of close' : `exited with code ${code}`}\n${s.output}` });
        }
      }),
    );
  } finally {
    for (const s of slots) {
      const c = s.child;
      if (c && c.exitCode === null && c.signalCode === null) {
        s.expectedExit = true;
        c.kill('SIGKILL');
        c.kill('SIGCONT');
        await s.exited;
      }
    }
    for (const a of admins) a.disconnect();
    await Promise.all(slots.flatMap((s) => s.proxies.map((p) => p.close())));
    if (cluster) await cluster.stop();
    else if (topology) await topology.stop();
    else await Promise.all(servers.map((s) => s.stop()));
  }

  // Check the history.
  const records: LogRecord[] = [];
  const perProcess: LogRecord[][] = [];
  let notes = 0;
  for (const file of fs.readdirSync(logDir)) {
    const start = records.length;
    for (const line of fs.readFileSync(path.join(logDir, file), 'utf8').split('\n')) {
      if (!line) continue;
      let rec: LogRecord | { type: 'note' };
      try {
        rec = JSON.parse(line) as LogRecord | { type: 'note' };
      } catch {
        continue; // the line in flight when its worker was killed
      }
      if (rec.type === 'note') notes++;
      else records.push(rec);
    }
    perProcess.push(records.slice(start));
  }
  const heap = heapTrend(perProcess);
  const holds = buildHolds(records, faults);
  // A Cluster is one master per lock: its restarts carry the locks they lost instead.
  const report = checkHistory(holds, faults, { lease, masters: quorum ? servers.length : 1, loopGaps: loopGaps(records) });
  report.violations.push(...ghostViolations(records), ...violations);
  const limits = { [SEMAPHORE.name]: SEMAPHORE.limit };
  const permits = opts.semaphore ? checkPermits(holds, faults, { lease, limits, loopGaps: loopGaps(records) }) : undefined;
  if (permits) report.violations.push(...permits.violations);
  const faultsByKind = Object.fromEntries([...FAULT_KINDS, 'failover'].map((k) => [k, faults.filter((f) => f.kind === k).length])) as Record<FaultKind, number>;
  const summary = [
    `holdfast chaos${opts.readWrite ? ' (read-write locks)' : ''}${opts.fair ? ' (fair locks)' : ''}${opts.multi ? ' (with multi-locks)' : ''}${quorum ? ` (quorum mode, ${servers.length} masters)` : clustered ? ` (Cluster mode, ${servers.length} masters)` : sentinel ? ` (Sentinel mode, syncReplicas ${opts.syncReplicas ? JSON.stringify(CHAOS_SYNC_REPLICAS) : 'off'})` : ''}: ${workers} workers x ${tasks} tasks, locks ${LOCKS.join(', ')}, watchdogTimeout ${lease} ms, ${Math.round(durationMs / 1000)} s`,
    formatReport(report, faults),
    ...(permits ? [formatPermitReport(permits, limits)] : []),
    `client connections seen on the servers in two CLIENT LIST rounds: ${proxied.clients}${clustered ? `, ${proxied.shardSubscribers} of them sharded subscribers` : ''}; not through a worker's proxy: ${violations.filter((v) => v.kind === 'proxy').length}`,
    heap
      ? `heap after GC of the longest-lived worker, over its last ${heap.spanS} s: ${heap.firstMB} MB -> ${heap.lastMB} MB (largest ${heap.maxMB} MB)`
      : 'heap: no worker lived long enough for two samples',
    `logs: ${report.violations.length > 0 || opts.keepLogs ? logDir : '(removed)'}`,
  ].join('\n');
  if (report.violations.length === 0 && !opts.keepLogs) fs.rmSync(logDir, { recursive: true, force: true });
  else fs.writeFileSync(path.join(logDir, 'faults.json'), JSON.stringify(faults, null, 1));
  return { report, faults, faultsByKind, violations: report.violations, summary, logDir, clientsChecked: proxied, heap };
}

/** Cluster mode: shard channels left on a node (SSUBSCRIBE lives per shard, not in PUBSUB CHANNELS). */
async function shardLeaks(admin: Redis, node: number, violations: Violation[]): Promise<number> {
  const channels = (await admin.call('PUBSUB', 'SHARDCHANNELS')) as string[];
  if (channels.length > 0) violations.push({ kind: 'leak', message: `shard channels left after close on node ${node}: ${channels.join(', ')}` });
  const numsub = (await admin.call('PUBSUB', 'SHARDNUMSUB', ...LOCKS.flatMap((l) => [`holdfast:{${l}}:ch`, `holdfast:{${l}}:next`]))) as (string | number)[];
  for (let j = 0; j < numsub.length; j += 2) {
    if (Number(numsub[j + 1]) > 0) violations.push({ kind: 'leak', message: `${numsub[j]} still has ${numsub[j + 1]} shard subscriber(s) on node ${node}` });
  }
  return channels.length;
}

function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
