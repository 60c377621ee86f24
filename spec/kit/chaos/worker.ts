/**
 * A chaos worker (child process of spec/kit/chaos/run.ts): its LockClient, its
 * connections (through its proxies, or via Sentinel), the fenced register, and several
 * tasks (sections.ts) that take locks over and over and log every step to a JSONL file.
 *
 * Run: node -r tsx/cjs spec/kit/chaos/worker.ts <json config>
 *
 * Logging is fs.appendFileSync, one line per event: a SIGKILLed worker loses at most
 * the line it was writing. Times are Date.now(): the orchestrator and all workers run
 * on one machine and share its wall clock (hrtime would not be comparable across processes).
 *
 * IPC from the orchestrator: 'stop' (finish the current holds, take no more, close the
 * LockClient, then report 'closed'), 'exit' (drop the connection and the IPC channel:
 * the process must then exit by itself, which the orchestrator checks), `{ block: ms }`
 * (busy-wait that long: the event loop runs nothing, as under a long synchronous job;
 * replies `{ blocked: [from, to] }`).
 */
import fs from 'node:fs';
import Redis, { Cluster } from 'ioredis';
import { LockClient } from '../../../lib';
import type { LogRecord } from './history';
import { seededRng } from './prng';
import { FencedRegister } from './register';
import { sections, type SectionsConfig } from './sections';

export interface WorkerConfig extends SectionsConfig {
  /** One port: a single Redis; several: independent masters (quorum mode), or Cluster nodes (see clusterNodes). */
  ports: number[];
  /**
   * Cluster mode: the nodes' own ports, in the order of `ports` (this worker's proxies
   * in front of them). CLUSTER SLOTS names nodes by their own address, so natMap must
   * send each one to its proxy, or redirects and new connections would bypass them.
   */
  clusterNodes?: number[];
  /** Sentinel mode: the workers connect through these sentinels (no proxies); `ports` is empty. */
  sentinel?: { addresses: { host: string; port: number }[]; name: string };
  /** The LockClient's option syncReplicas. */
  syncReplicas?: { min: number; timeout: number };
  /** The fenced register's redis-server (register.ts), reached directly. */
  registerPort?: number;
  log: string;
  tasks: number;
  /** Seeds every choice of this worker process (prng.ts). */
  seed: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const pid = process.pid;

function log(record: LogRecord): void {
  fs.appendFileSync(config.log, `${JSON.stringify(record)}\n`);
}

function note(text: string): void {
  fs.appendFileSync(config.log, `${JSON.stringify({ type: 'note', at: Date.now(), text })}\n`);
}

let stopping = false;

function masters(ports: number[]): Redis[] {
  return ports.map((port) => {
    const redis = new Redis({
      host: '127.0.0.1',
      port,
      // Reconnect fast after a reset or a restart; keep commands queued meanwhile
      // (holdfast bounds each of its calls itself).
      retryStrategy: () => 50,
      maxRetriesPerRequest: null,
    });
    redis.on('error', () => undefined);
    return redis;
  });
}

function cluster(proxies: number[], nodes: number[]): Cluster {
  const natMap = Object.fromEntries(nodes.map((node, i) => [`127.0.0.1:${node}`, { host: '127.0.0.1', port: proxies[i]! }]));
  const c = new Cluster(
    proxies.map((port) => ({ host: '127.0.0.1', port })),
    {
      natMap,
      // ioredis's defaults otherwise; only faster retries: a restarted node answers
      // CLUSTERDOWN for ~2 s, a stall ends with every connection reset.
      clusterRetryStrategy: () => 50,
      retryDelayOnClusterDown: 50,
      retryDelayOnTryAgain: 50,
    },
  );
  c.on('error', () => undefined);
  c.on('node error', () => undefined);
  return c;
}

/** Sentinel mode: ioredis asks the sentinels for the primary, and again after every break. */
function sentinelManaged(sentinel: NonNullable<WorkerConfig['sentinel']>): Redis {
  const redis = new Redis({ sentinels: sentinel.addresses, name: sentinel.name, sentinelRetryStrategy: () => 50, retryStrategy: () => 50, maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  return redis;
}

const connections: (Redis | Cluster)[] = config.sentinel
  ? [sentinelManaged(config.sentinel)]
  : config.clusterNodes
    ? [cluster(config.ports, config.clusterNodes)]
    : masters(config.ports);
const locks = new LockClient(connections.length === 1 ? connections[0]! : (connections as Redis[]), {
  watchdogTimeout: config.watchdogTimeout,
  ...(config.syncReplicas ? { syncReplicas: config.syncReplicas } : {}),
});
locks.on('error', (e) => note(`client error: ${e.message}`));
// Debugging aid: every hold's life in the log, by owner.
const trace = process.env.HOLDFAST_CHAOS_TRACE === '1';
let lastAcquired = '';
if (trace) {
  locks.on('acquired', (e) => {
    lastAcquired = e.owner;
    note(`trace acquired ${e.name} ${e.owner} token ${e.token}`);
  });
  locks.on('released', (e) => note(`trace released ${e.name} ${e.owner}`));
  locks.on('lost', (e) => note(`trace lost ${e.name} ${e.owner} ${e.reason}`));
}

/** Sections of each lock this worker is in right now (reentries not counted). */
const active = new Map<string, number>();
// The watchdog renewing a lock none of our sections holds: a hold that outlived its
// release (e.g. a resent acquisition counted twice) would block everyone for good.
locks.on('renewed', (e) => {
  if ((active.get(e.name) ?? 0) === 0) log({ type: 'ghost', lock: e.name, owner: e.owner, at: Date.now() });
});

const register = config.registerPort === undefined ? undefined : new FencedRegister(config.registerPort);
const { task } = sections({
  config,
  locks,
  rng: seededRng(config.seed),
  register,
  log,
  note,
  trace,
  lastAcquired: () => lastAcquired,
  active,
  stopping: () => stopping,
});

/** Blocks the event loop: nothing runs meanwhile (timers, renewals, replies). */
function block(ms: number): [number, number] {
  const from = Date.now();
  while (Date.now() < from + ms) {
    // busy: the point is that the loop runs nothing else
  }
  return [from, Date.now()];
}

async function main(): Promise<void> {
  note(`worker ${config.worker} gen ${config.gen} pid ${pid} started`);
  let stopped: () => void = () => undefined;
  const stopRequested = new Promise<void>((resolve) => (stopped = resolve));
  let exiting = false;
  const onMessage = (msg: unknown) => {
    if (msg === 'stop') {
      stopping = true;
      stopped();
    } else if (typeof msg === 'object' && msg !== null && 'block' in msg) {
      process.send?.({ blocked: block(Number((msg as { block: unknown }).block)) });
    } else if (msg === 'exit') {
      exiting = true;
      process.off('message', onMessage);
      for (const c of connections) c.disconnect();
      register?.disconnect();
      process.disconnect?.();
    }
  };
  process.on('message', onMessage);
  // The orchestrator died (a SIGTERM or a crash, where Ctrl-C would have reached us too):
  // nobody will stop us or read our log, and its servers are gone. Without this, the
  // worker retried its locks against dead ports for good.
  process.once('disconnect', () => {
    if (exiting) return;
    note(`worker ${config.worker} gen ${config.gen}: orchestrator gone, exiting`);
    process.exit(3);
  });
  // Tasks begin once the connections answer, so that a wait's start is when its first
  // attempt can go out (the checker takes a writer's place as joined a round trip after
  // its wait began): a fresh process's first calls would otherwise wait for the connect
  // and the scripts' load (sent on 'ready', answered before the second PING). Bounded: a
  // fault under way (a restart, a failover) may hold the connect up; the tasks then go on.
  const answered = Promise.all(connections.map(async (c) => {
    await c.ping();
    await c.ping();
  }));
  await Promise.race([answered.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  // The client id lets the orchestrator see which worker holds a lock (owner = clientId:scope).
  process.send?.({ ready: locks.id });
  // Heap after a full GC every 5 s (spawned with --expose-gc): flat over a long run, or a leak.
  const gc = (globalThis as { gc?: () => void }).gc;
  const sampler = setInterval(() => {
    gc?.();
    log({ type: 'mem', at: Date.now(), heap: process.memoryUsage().heapUsed });
  }, 5_000);
  sampler.unref();
  // Loop gaps: a timer due every 10 ms that fires far later shows the process ran nothing
  // meanwhile (starved by a loaded machine, or paused). The checker excuses a late loss
  // report only across such a gap (see starvedThrough in history.ts).
  let lastTick = Date.now();
  const gapSampler = setInterval(() => {
    const t = Date.now();
    if (t - lastTick > 30) log({ type: 'gap', pid, from: lastTick, to: t });
    lastTick = t;
  }, 10);
  gapSampler.unref();
  const tasks = Array.from({ length: config.tasks }, (_, t) => task(t));
  await stopRequested;
  await Promise.all(tasks);
  await locks.close();
  note(`worker ${config.worker} closed`);
  process.send?.('closed');
}

main().catch((e) => {
  note(`worker failed: ${e instanceof Error ? e.stack : String(e)}`);
  process.exit(1);
});
