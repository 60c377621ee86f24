/**
 * A chaos worker (child process of spec/kit/chaos/run.ts): several tasks that take locks
 * with lock.run() over and over, hold them for short random times, write to a fenced
 * "store" while holding them, and log every step to a JSONL file.
 *
 * Run: node -r tsx/cjs spec/kit/chaos/worker.ts <json config>
 *
 * Logging is fs.appendFileSync, one line per event: a SIGKILLed worker loses at most
 * the line it was writing. Times are Date.now(): the orchestrator and all workers run
 * on one machine and share its wall clock (hrtime would not be comparable across processes).
 *
 * IPC from the orchestrator: 'stop' (finish the current holds, take no more, close the
 * LockClient, then report 'closed'), 'exit' (drop the connection and the IPC channel:
 * the process must then exit by itself, which the orchestrator checks).
 */
import fs from 'node:fs';
import Redis, { Cluster } from 'ioredis';
import { LockClient, LockLostError, type AcquiredEvent } from '../../../lib';
import type { LogRecord } from './history';

export interface WorkerConfig {
  worker: number;
  gen: number;
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
  log: string;
  tasks: number;
  locks: string[];
  watchdogTimeout: number;
  seed?: number;
  /** A semaphore the tasks also take permits of (1 to 3 at a time), in about a third of their turns. */
  semaphore?: { name: string; limit: number };
  /** Read-write locks: each section reads (most) or writes; readers log no fenced writes. */
  readWrite?: boolean;
  /** The sections take fair locks (getFairLock) instead of getLock. */
  fair?: boolean;
  /** In about a third of their turns the tasks take a multi-lock over two of `locks`, logged as one section per name. */
  multi?: boolean;
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const pid = process.pid;

function log(record: LogRecord): void {
  fs.appendFileSync(config.log, `${JSON.stringify(record)}\n`);
}

function note(text: string): void {
  fs.appendFileSync(config.log, `${JSON.stringify({ type: 'note', at: Date.now(), text })}\n`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const rand = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));

let stopping = false;
let holdSeq = 0;

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

/** How long to stay in a critical section: mostly short, sometimes across renewals. */
function holdTime(): number {
  const r = Math.random();
  if (r < 0.6) return rand(2, 40);
  if (r < 0.85) return rand(40, 300);
  return rand(300, 2_000);
}

interface Slot {
  id?: string;
}

/** The critical section: log the acquisition, write (fenced) until done or lost, log the end. */
async function section(slot: Slot, side: Side, lockName: string, task: number, signal: AbortSignal, token: number, inner?: () => Promise<void>, permits?: number): Promise<void> {
  const id = `${config.worker}.${config.gen}.${task}.${++holdSeq}`;
  slot.id = id;
  active.set(lockName, (active.get(lockName) ?? 0) + 1);
  const start = Date.now();
  log({ type: 'acq', id, worker: config.worker, pid, task, lock: lockName, token, start, ...(side === 'lock' ? {} : { side }), ...(permits === undefined ? {} : { permits }) });
  // A reader acts (its last action dates the section's end) but writes nothing to the fenced store.
  const act = side === 'read' ? 'act' : 'w';
  if (trace) note(`trace section ${id} ${lockName} owner ${lastAcquired}`);
  const onAbort = () => {
    const reason = signal.reason instanceof LockLostError ? signal.reason.reason : String(signal.reason);
    log({ type: 'lost', id, at: Date.now(), reason });
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    // First write at once: a successor's write fences off everything its predecessor writes later.
    log({ type: act, id, at: Date.now() });
    const until = start + holdTime();
    // Sometimes reenter the same lock (a nested service method): its lock and unlock
    // must change nothing for other owners, even when a reply is lost and resent.
    let reenter = permits === undefined && Math.random() < 0.2;
    while (!signal.aborted && Date.now() < until) {
      await sleep(rand(1, 25));
      if (signal.aborted) break;
      log({ type: act, id, at: Date.now() });
      if (reenter) {
        reenter = false;
        // A writer sometimes reenters by reading (its scope may), and reads on.
        const inside = side === 'write' && Math.random() < 0.5 ? 'read' : side;
        await handle(lockName, inside)
          .run(async () => {
            await sleep(rand(1, 20));
            if (!signal.aborted) log({ type: act, id, at: Date.now() });
          })
          .catch((e: Error) => void (trace && note(`trace inner ${id} ${lockName}: ${e.message}`))); // a loss shows on the outer section's signal
      }
    }
    if (inner && !signal.aborted) await inner();
  } finally {
    log({ type: 'end', id, at: Date.now() });
  }
}

function outcomeOf(error: unknown): 'lost' | 'error' {
  return error instanceof LockLostError ? 'lost' : 'error';
}

type Side = 'lock' | 'read' | 'write';

/** The Lock a section takes: the lock (fair with --fair), or a side of the read-write lock of that name. */
function handle(name: string, side: Side) {
  if (side === 'lock') return config.fair ? locks.getFairLock(name) : locks.getLock(name);
  const rw = locks.getReadWriteLock(name);
  return side === 'read' ? rw.readLock() : rw.writeLock();
}

/** lock.run(section), then the outcome line; false when the lock was not acquired. */
async function hold(name: string, t: number, waitTime: number, inner?: () => Promise<void>): Promise<boolean> {
  const slot: Slot = {};
  // Read-mostly, as read-write locks are used.
  const side: Side = !config.readWrite ? 'lock' : Math.random() < 0.7 ? 'read' : 'write';
  try {
    await handle(name, side).run(async ({ signal, token }) => section(slot, side, name, t, signal, token, inner), { waitTime });
    if (slot.id) log({ type: 'rel', id: slot.id, at: Date.now(), outcome: 'released' });
  } catch (e) {
    // No id: the lock was never acquired (wait ran out, Redis unreachable).
    if (slot.id) log({ type: 'rel', id: slot.id, at: Date.now(), outcome: outcomeOf(e), error: (e as Error).message });
  } finally {
    // Counted from the section's start until run() has released (or lost) the lock.
    if (slot.id) active.set(name, active.get(name)! - 1);
  }
  return slot.id !== undefined;
}

/** sem.run(section) with 1 to 3 permits, then the outcome line; false when the permits were not acquired. */
async function holdPermits(sem: { name: string; limit: number }, t: number, waitTime: number): Promise<boolean> {
  const slot: Slot = {};
  const permits = rand(1, 3);
  try {
    await locks.getSemaphore(sem.name, sem.limit).run(async ({ signal }) => section(slot, 'lock', sem.name, t, signal, 0, undefined, permits), { permits, waitTime });
    if (slot.id) log({ type: 'rel', id: slot.id, at: Date.now(), outcome: 'released' });
  } catch (e) {
    if (slot.id) log({ type: 'rel', id: slot.id, at: Date.now(), outcome: outcomeOf(e), error: (e as Error).message });
  } finally {
    if (slot.id) active.set(sem.name, active.get(sem.name)! - 1);
  }
  return slot.id !== undefined;
}

/**
 * getMultiLock([a, b]).run() over two distinct names in random order, logged as one
 * section per name (each with that name's token and fenced writes), so the per-name
 * checks hold it to the invariant: no other section of either name overlaps it.
 * The run's signal is the holder's one notice of a loss of any name, and it stops
 * acting on every name then: so the abort is logged as a loss on each section.
 * A name's section starts at its grant (its 'acquired' event, matched by token), not
 * when the last name came: the names are taken one by one, and each is held, so must
 * exclude everyone else, from its own grant on (a restart may fall in between).
 */
async function holdMulti(t: number, waitTime: number): Promise<boolean> {
  const pool = [...config.locks];
  const names = [0, 1].map(() => pool.splice(Math.floor(Math.random() * pool.length), 1)[0]!);
  const ids: string[] = [];
  // Active from the call on: a name taken first is held (and renewed) while the next is
  // awaited, which is no ghost. One taken and not given back still shows after the call.
  for (const name of names) active.set(name, (active.get(name) ?? 0) + 1);
  const granted = new Map<string, number>();
  const onGrant = (e: AcquiredEvent) => void (e.kind === 'multi' && names.includes(e.name) && granted.set(`${e.name} ${e.token}`, Date.now()));
  locks.on('acquired', onGrant);
  try {
    await locks.getMultiLock(names).run(async ({ signal, tokens }) => {
      const start = Date.now();
      locks.off('acquired', onGrant);
      for (const name of names) {
        ids.push(`${config.worker}.${config.gen}.${t}.${++holdSeq}`);
        const grant = granted.get(`${name} ${tokens[name]}`) ?? start;
        log({ type: 'acq', id: ids[ids.length - 1]!, worker: config.worker, pid, task: t, lock: name, token: tokens[name]!, start: grant, with: names.filter((n) => n !== name) });
      }
      const onAbort = () => {
        const reason = signal.reason instanceof LockLostError ? `${signal.reason.lockName} ${signal.reason.reason}` : String(signal.reason);
        for (const id of ids) log({ type: 'lost', id, at: Date.now(), reason });
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      const write = () => ids.forEach((id) => log({ type: 'w', id, at: Date.now() }));
      try {
        write();
        const until = start + holdTime();
        while (!signal.aborted && Date.now() < until) {
          await sleep(rand(1, 25));
          if (!signal.aborted) write();
        }
      } finally {
        for (const id of ids) log({ type: 'end', id, at: Date.now() });
      }
    }, { waitTime });
    for (const id of ids) log({ type: 'rel', id, at: Date.now(), outcome: 'released' });
  } catch (e) {
    for (const id of ids) log({ type: 'rel', id, at: Date.now(), outcome: outcomeOf(e), error: (e as Error).message });
  } finally {
    locks.off('acquired', onGrant);
    for (const name of names) active.set(name, active.get(name)! - 1);
  }
  return ids.length > 0;
}

async function task(t: number): Promise<void> {
  const [main, ...others] = config.locks;
  while (!stopping) {
    if (config.multi && Math.random() < 0.33) {
      await sleep((await holdMulti(t, 1_500)) ? rand(0, 15) : rand(5, 30));
      continue;
    }
    if (config.semaphore && Math.random() < 0.35) {
      await sleep((await holdPermits(config.semaphore, t, 1_500)) ? rand(0, 15) : rand(5, 30));
      continue;
    }
    const r = Math.random();
    const name = r < 0.65 || others.length === 0 ? main! : others[Math.floor(Math.random() * others.length)]!;
    // Sometimes a second lock inside the first (always main -> others[0]: no lock-order deadlock).
    const nested = name === main && others.length > 0 && Math.random() < 0.15 ? others[0]! : undefined;
    const took = await hold(name, t, 1_500, nested ? async () => void (await hold(nested, t, 300)) : undefined);
    await sleep(took ? rand(0, 15) : rand(5, 30));
  }
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
    } else if (msg === 'exit') {
      exiting = true;
      process.off('message', onMessage);
      for (const c of connections) c.disconnect();
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
