/**
 * holdfast benchmark: holdfast side by side with the raw floor (holdfast's own Lua
 * scripts called directly) and its peers (redlock v5, redis-semaphore, node-redisson),
 * in one run, on redis-server processes it starts itself (127.0.0.1, free ports).
 *
 *   npm run bench                      # default: ~5 min on 2 cores
 *   npm run bench -- --quick           # smoke run, < 1 min
 *   npm run bench -- --only workers16  # one scenario (comma list; names or numbers 1..6)
 *   options: --rounds N; --impl holdfast[,redlock...] (only these, and the floor);
 *            --svg (write docs/bench.svg also for --quick / --only / --impl runs)
 *   profile: npx tsx --cpu-prof --cpu-prof-dir=bench-results/profiles scripts/bench.ts --only 1 --impl holdfast
 *            (child processes inherit the flag and write their own profiles)
 *
 * holdfast runs from source (lib/, via tsx). Children (scenarios 3, 4, 6) are forks of
 * this file with the same loader; each round of 3 and 4 gets fresh processes.
 *
 * Scenarios (implementations alternate within each round: A B C D E, A B C D E, ...):
 *   1 uncontended  sequential lock+unlock on one key
 *   2 parallel64   64 concurrent loops, each on its own key
 *   3 workers16    16 workers on one key in one process, ~0 ms critical section
 *   4 procs4       4 processes on one key, 0 ms and 2 ms think time
 *   5 quorum       uncontended cycle on 3 independent masters
 *   6 watchdog     10 000 held locks under the watchdog; heap per lock, heap growth
 *
 * Output: markdown tables on stdout, JSON in bench-results/latest.json, an SVG chart
 * in docs/bench.svg (full default runs). Progress goes to stderr.
 *
 * Costs: "RT" = commands sent by the Node process(es) (counted by wrapping ioredis'
 * Redis.prototype.sendCommand: round trips, pipelining aside); "Redis cmds" = server
 * total_commands_processed delta, which includes the commands run inside Lua scripts;
 * "Redis CPU" = used_cpu_user+sys delta of the server(s); "Node CPU" = process.cpuUsage.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import Redlock, { type Lock as RedlockLock } from 'redlock';
import { Mutex, RedlockMutex } from 'redis-semaphore';
import { Redisson } from 'node-redisson';
import { LockClient } from '../lib/index';
import { startMasters, startServer, stopAll, type RedisServer } from './servers';

// ---------------------------------------------------------------------------
// Client-side command counter: every ioredis Redis instance in this process (ours,
// holdfast's subscriber duplicate, node-redisson's own connections).

let sentCommands = 0;
{
  const proto = Redis.prototype as unknown as { sendCommand: (...args: unknown[]) => unknown };
  const original = proto.sendCommand;
  proto.sendCommand = function (this: unknown, ...args: unknown[]) {
    sentCommands++;
    return original.apply(this, args);
  };
}

// ---------------------------------------------------------------------------
// Settings

const LEASE = 30_000; // every implementation: 30 s lease / watchdog timeout
const POLL_MS = 1; // raw floor under contention: retry every 1 ms
const PEER_RETRY_MS = 10; // redlock retryDelay, redis-semaphore retryInterval (its default)
const PEER_RETRY_JITTER = 5; // redlock retryJitter (default 100 would dominate waits)
const MAX_WAIT_MS = 60_000; // any single acquisition gives up after this
const MAX_OPS_PER_LOOP = 2_000_000;
const WATCHDOG_TIMEOUT = 3_000;

interface Config {
  mode: 'default' | 'quick';
  rounds: number;
  warmMs: number;
  seqMs: number;
  parMs: number;
  contMs: number;
  procMs: number;
  quorumMs: number;
  wdLocks: number;
  wdPeriods: number;
  wdCycles: number;
  /** After a run's deadline: time left for in-flight calls; loops still waiting then are abandoned ("stuck"). */
  graceMs: number;
  /** Total time that may be spent measuring disturbed runs again. */
  retryBudgetMs: number;
}

const DEFAULT_CONFIG: Config = {
  mode: 'default',
  rounds: 3,
  warmMs: 300,
  seqMs: 2_000,
  parMs: 2_000,
  contMs: 3_000,
  procMs: 2_500,
  quorumMs: 2_000,
  wdLocks: 10_000,
  wdPeriods: 5,
  wdCycles: 1_000_000,
  graceMs: 2_000,
  retryBudgetMs: 120_000,
};

const QUICK_CONFIG: Config = {
  mode: 'quick',
  rounds: 1,
  warmMs: 100,
  seqMs: 500,
  parMs: 500,
  contMs: 700,
  procMs: 700,
  quorumMs: 500,
  wdLocks: 2_000,
  wdPeriods: 2,
  wdCycles: 20_000,
  graceMs: 1_000,
  retryBudgetMs: 10_000,
};

const SCENARIOS = ['uncontended', 'parallel64', 'workers16', 'procs4', 'quorum', 'watchdog'] as const;
type ScenarioId = (typeof SCENARIOS)[number];

// ---------------------------------------------------------------------------
// Small helpers

const startedAt = performance.now();
const logPrefix = process.argv.some((a) => a.startsWith('--child=')) ? `child ${process.pid}: ` : '';
function log(message: string): void {
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${logPrefix}${message}\n`);
}

/** Monotonic microseconds, the same clock in every process (CLOCK_MONOTONIC). */
function hrUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function percentiles(samples: number[]): { p50: number; p99: number; max: number } {
  if (samples.length === 0) return { p50: NaN, p99: NaN, max: NaN };
  const s = Float64Array.from(samples).sort();
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
  return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1] };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Resolves with the number of promises still pending at `untilMs` (performance.now() time). */
async function settleWithin(promises: Promise<unknown>[], untilMs: number): Promise<number> {
  let pending = promises.length;
  const all = Promise.all(promises.map((p) => p.then(() => void pending--, () => void pending--)));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, untilMs - performance.now()));
  });
  await Promise.race([all, timeout]);
  clearTimeout(timer);
  return pending;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs fn(0..n-1) with at most `concurrency` calls in flight. */
async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

const errorSamples = new Map<string, number>();
function noteError(where: string, error: unknown): void {
  const key = `${where}: ${errorText(error)}`.slice(0, 200);
  const n = (errorSamples.get(key) ?? 0) + 1;
  errorSamples.set(key, n);
  if (n === 1) log(`error (first of its kind) ${key}`);
}

/** Node prints each process warning; peers repeat theirs thousands of times: print each kind once. */
const warningKinds = new Map<string, number>();
function dedupeWarnings(): void {
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    const key = `${w.name}: ${w.message.replace(/\d+/g, 'N')}`.slice(0, 200);
    const n = (warningKinds.get(key) ?? 0) + 1;
    warningKinds.set(key, n);
    if (n === 1) log(`warning (first of its kind, repeats counted): ${w.name}: ${w.message}`);
  });
}

function warningCount(): number {
  return sum([...warningKinds.values()]);
}

let unhandledRejections = 0;
/** Unhandled rejections and warnings of child processes that have exited. */
const childCounts = { unhandled: 0, warnings: 0 };
function countUnhandled(reason: unknown): void {
  unhandledRejections++;
  if (unhandledRejections <= 3) log(`unhandled rejection (counted, not fatal): ${errorText(reason)}`);
}

// ---------------------------------------------------------------------------
// Implementations: each opens its own connections; a worker is one lock user.

interface Worker {
  acquire(): Promise<void>;
  release(): Promise<void>;
}

interface Runner {
  worker(name: string): Worker;
  close(): Promise<void>;
}

type Family = 'raw' | 'holdfast' | 'holdfast-fair' | 'redlock' | 'redis-semaphore' | 'node-redisson';
const FAMILIES: Family[] = ['raw', 'holdfast', 'holdfast-fair', 'redlock', 'redis-semaphore', 'node-redisson'];

interface ImplDef {
  id: string;
  label: string;
  family: Family;
  open(ports: number[]): Promise<Runner>;
}

async function connect(port: number): Promise<Redis> {
  const redis = new Redis({ host: '127.0.0.1', port });
  redis.on('error', (e: unknown) => noteError(`ioredis :${port}`, e));
  await redis.ping();
  return redis;
}

async function quitAll(conns: Redis[]): Promise<void> {
  await Promise.all(conns.map((c) => c.quit().catch(() => c.disconnect())));
}

const LUA_DIR = path.join(__dirname, '..', 'lib', 'lua');
const RAW_LUA = {
  acquire: fs.readFileSync(path.join(LUA_DIR, 'acquire.lua'), 'utf8'),
  release: fs.readFileSync(path.join(LUA_DIR, 'release.lua'), 'utf8'),
};
let ownerSeq = 0;

/** The floor: holdfast's acquire/release scripts by EVALSHA on one connection per master. */
async function openRaw(ports: number[]): Promise<Runner> {
  const conns = await Promise.all(ports.map(connect));
  const acquireSha = String(await conns[0].script('LOAD', RAW_LUA.acquire));
  const releaseSha = String(await conns[0].script('LOAD', RAW_LUA.release));
  await Promise.all(conns.slice(1).map((c) => Promise.all([c.script('LOAD', RAW_LUA.acquire), c.script('LOAD', RAW_LUA.release)])));
  const quorum = Math.floor(conns.length / 2) + 1;
  return {
    worker(name) {
      const key = `raw:{${name}}`;
      const fence = `${key}:fence`;
      const channel = `${key}:ch`;
      const owner = `raw-${process.pid}-${++ownerSeq}`;
      const acquireOn = (c: Redis) => c.evalsha(acquireSha, 2, key, fence, owner, LEASE) as Promise<number[]>;
      const releaseOn = (c: Redis) => c.evalsha(releaseSha, 2, key, fence, owner, channel, 'publish', '', 0, '', 1) as Promise<number[]>;
      if (conns.length === 1) {
        const c = conns[0];
        return {
          async acquire() {
            const giveUp = performance.now() + MAX_WAIT_MS;
            while ((await acquireOn(c))[0] !== 1) {
              if (performance.now() > giveUp) throw new Error(`raw: not acquired within ${MAX_WAIT_MS} ms`);
              await sleep(POLL_MS);
            }
          },
          async release() {
            const reply = await releaseOn(c);
            if (reply[0] !== 2) throw new Error(`raw release: unexpected reply ${JSON.stringify(reply)}`);
          },
        };
      }
      // Quorum: all masters in parallel, wait for every reply (Promise.all).
      return {
        async acquire() {
          const giveUp = performance.now() + MAX_WAIT_MS;
          for (;;) {
            const replies = await Promise.all(conns.map(acquireOn));
            if (replies.filter((r) => r[0] === 1).length >= quorum) return;
            await Promise.all(conns.map(releaseOn));
            if (performance.now() > giveUp) throw new Error(`raw quorum: not acquired within ${MAX_WAIT_MS} ms`);
            await sleep(POLL_MS);
          }
        },
        async release() {
          await Promise.all(conns.map(releaseOn));
        },
      };
    },
    close: () => quitAll(conns),
  };
}

/** holdfast as documented: lock() (watchdog lease) and unlock(), one handle per worker, outside scopes. */
async function openHoldfast(ports: number[], fair = false): Promise<Runner> {
  const conns = await Promise.all(ports.map(connect));
  const client = new LockClient(conns.length === 1 ? conns[0] : conns, { watchdogTimeout: LEASE });
  client.on('error', (e) => noteError('holdfast error event', e));
  client.on('lost', (e) => noteError('holdfast lost event', new Error(`${e.name}: ${e.reason}`)));
  return {
    worker(name) {
      const lock = fair ? client.getFairLock(name) : client.getLock(name);
      return { acquire: () => lock.lock(), release: () => lock.unlock() };
    },
    async close() {
      await client.close();
      await quitAll(conns);
    },
  };
}

/** redlock v5: acquire([resource], lease) / lock.release(); polling retries under contention. */
async function openRedlock(ports: number[]): Promise<Runner> {
  const conns = await Promise.all(ports.map(connect));
  const redlock = new Redlock(conns, {
    retryCount: Math.ceil(MAX_WAIT_MS / PEER_RETRY_MS),
    retryDelay: PEER_RETRY_MS,
    retryJitter: PEER_RETRY_JITTER,
  });
  // redlock emits 'error' (ResourceLockedError) on every contended attempt; without a
  // listener EventEmitter would throw.
  redlock.on('error', () => undefined);
  return {
    worker(name) {
      let held: RedlockLock | undefined;
      return {
        async acquire() {
          held = await redlock.acquire([`redlock:${name}`], LEASE);
        },
        async release() {
          const lock = held;
          held = undefined;
          if (lock) await lock.release();
        },
      };
    },
    close: () => quitAll(conns),
  };
}

/** redis-semaphore Mutex (RedlockMutex on several masters): acquire()/release(), auto-refresh on. */
async function openSemaphore(ports: number[]): Promise<Runner> {
  const conns = await Promise.all(ports.map(connect));
  const options = {
    lockTimeout: LEASE,
    acquireTimeout: MAX_WAIT_MS,
    retryInterval: PEER_RETRY_MS,
    onLockLost: (e: Error) => noteError('redis-semaphore lost', e),
  };
  return {
    worker(name) {
      const mutex = conns.length === 1 ? new Mutex(conns[0], `${name}`, options) : new RedlockMutex(conns, `${name}`, options);
      return { acquire: () => mutex.acquire(), release: () => mutex.release() };
    },
    close: () => quitAll(conns),
  };
}

/** node-redisson: its own two connections (commands + pub/sub); lock() (watchdog) / unlock(). */
async function openRedisson(ports: number[]): Promise<Runner> {
  const redisson = new Redisson({
    redis: { options: { host: '127.0.0.1', port: ports[0] } },
    lockWatchdogTimeout: BigInt(LEASE),
  });
  await redisson.redis.ping();
  return {
    worker(name) {
      // Each handle gets its own random clientId: one owner per worker.
      const lock = redisson.getLock(`redisson:${name}`);
      return { acquire: () => lock.lock(), release: () => lock.unlock() };
    },
    close: () => redisson.quit(),
  };
}

const SINGLE_IMPLS: ImplDef[] = [
  { id: 'raw', label: 'raw floor (lib/lua via evalsha)', family: 'raw', open: openRaw },
  { id: 'holdfast', label: 'holdfast', family: 'holdfast', open: (ports) => openHoldfast(ports) },
  { id: 'holdfast-fair', label: 'holdfast fair lock', family: 'holdfast-fair', open: (ports) => openHoldfast(ports, true) },
  { id: 'redlock', label: 'redlock 5.0.0-beta.2', family: 'redlock', open: openRedlock },
  { id: 'redis-semaphore', label: 'redis-semaphore Mutex', family: 'redis-semaphore', open: openSemaphore },
  { id: 'node-redisson', label: 'node-redisson', family: 'node-redisson', open: openRedisson },
];

const QUORUM_IMPLS: ImplDef[] = [
  { id: 'raw-quorum', label: 'raw quorum (3 masters, Promise.all)', family: 'raw', open: openRaw },
  { id: 'holdfast-quorum', label: 'holdfast quorum (3 masters)', family: 'holdfast', open: (ports) => openHoldfast(ports) },
  { id: 'redlock-3', label: 'redlock, 3 clients', family: 'redlock', open: openRedlock },
  { id: 'redis-semaphore-redlock', label: 'redis-semaphore RedlockMutex (3)', family: 'redis-semaphore', open: openSemaphore },
];

function implById(id: string): ImplDef {
  const impl = [...SINGLE_IMPLS, ...QUORUM_IMPLS].find((i) => i.id === id);
  if (!impl) throw new Error(`unknown implementation ${id}`);
  return impl;
}

// ---------------------------------------------------------------------------
// Metering

interface ServerSnap {
  cmds: number;
  evalsha: number;
  cpuS: number;
  /** INFO commandstats calls per command (includes commands run inside scripts). */
  calls: Record<string, number>;
}

async function snapServer(admin: Redis): Promise<ServerSnap> {
  const info = await admin.info('all');
  const num = (re: RegExp) => Number(re.exec(info)?.[1] ?? 0);
  return {
    cmds: num(/total_commands_processed:(\d+)/),
    evalsha: num(/cmdstat_evalsha:calls=(\d+)/),
    cpuS: num(/used_cpu_user:([\d.]+)/) + num(/used_cpu_sys:([\d.]+)/),
    calls: Object.fromEntries([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1], Number(m[2])])),
  };
}

interface Cost {
  ms: number;
  nodeCpuUs: number;
  sent: number;
  redisCmds: number;
  evalsha: number;
  redisCpuUs: number;
  /** Server-side calls per command during the run (all servers; INFO itself excluded). */
  cmdMix: Record<string, number>;
  /** Machine-wide busy CPU time (/proc/stat), microseconds; NaN where unavailable. */
  machineBusyUs: number;
}

/** Busy CPU time of the whole machine so far (Linux /proc/stat), in microseconds. */
function machineBusyUs(): number {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + (steal ?? 0)) * (1e6 / 100); // USER_HZ = 100
  } catch {
    return NaN;
  }
}

/** CPU used during a run by processes other than ours (Node side and Redis), in cores. */
function foreignCores(cost: Cost): number {
  return Math.max(0, (cost.machineBusyUs - cost.nodeCpuUs - cost.redisCpuUs) / (cost.ms * 1000));
}

/** Runs disturbed by other processes above this are measured again (while the retry budget lasts). */
const FOREIGN_LIMIT = 0.3;
let retryBudgetMs = 0;

/** Waits (up to maxMs) until other processes use less than FOREIGN_LIMIT cores over 500 ms. */
async function waitForQuiet(maxMs: number): Promise<void> {
  const until = performance.now() + maxMs;
  while (performance.now() < until) {
    const b0 = machineBusyUs();
    const t0 = performance.now();
    await sleep(500);
    const cores = (machineBusyUs() - b0) / ((performance.now() - t0) * 1000);
    if (!(cores >= FOREIGN_LIMIT)) return; // also when /proc/stat is unavailable (NaN)
  }
}

/**
 * One measured run, repeated once when other processes on the machine took more than
 * FOREIGN_LIMIT cores during it (this is a shared 2-core box), while the budget lasts.
 */
async function measured(what: string, attempt: () => Promise<{ rec: RoundRecord; samples: number[] }>): Promise<{ rec: RoundRecord; samples: number[] }> {
  const t0 = performance.now();
  const first = await attempt();
  const f = foreignCores(first.rec.cost);
  if (!(f > FOREIGN_LIMIT) || retryBudgetMs <= 0) return first;
  log(`${what}: other processes took ${f.toFixed(2)} cores during the run: measuring it again`);
  await waitForQuiet(5_000);
  const second = await attempt();
  retryBudgetMs -= performance.now() - t0;
  second.rec.retried = true;
  return foreignCores(second.rec.cost) < f ? second : first;
}

function foreignNote(cost: Cost): string {
  const f = foreignCores(cost);
  return f > 0.15 ? ` [other processes: ${f.toFixed(2)} cores]` : '';
}

function mixDelta(before: ServerSnap[], after: ServerSnap[]): Record<string, number> {
  const mix: Record<string, number> = {};
  after.forEach((s, i) => {
    for (const [cmd, n] of Object.entries(s.calls)) {
      const d = n - (before[i].calls[cmd] ?? 0) - (cmd === 'info' ? 1 : 0);
      if (d > 0) mix[cmd] = (mix[cmd] ?? 0) + d;
    }
  });
  return mix;
}

class Meter {
  private s0: ServerSnap[] = [];
  private sent0 = 0;
  private cpu0: NodeJS.CpuUsage = { user: 0, system: 0 };
  private t0 = 0;
  private busy0 = 0;

  constructor(private readonly admins: Redis[]) {}

  async start(): Promise<void> {
    this.s0 = await Promise.all(this.admins.map(snapServer));
    this.sent0 = sentCommands;
    this.cpu0 = process.cpuUsage();
    this.busy0 = machineBusyUs();
    this.t0 = performance.now();
  }

  async stop(): Promise<Cost> {
    const ms = performance.now() - this.t0;
    const busy = machineBusyUs() - this.busy0;
    const cpu = process.cpuUsage(this.cpu0);
    const sent = sentCommands - this.sent0;
    const s1 = await Promise.all(this.admins.map(snapServer));
    return {
      ms,
      nodeCpuUs: cpu.user + cpu.system,
      sent,
      // The first INFO is counted after it ran: one per server in the delta.
      redisCmds: sum(s1.map((s, i) => s.cmds - this.s0[i].cmds - 1)),
      evalsha: sum(s1.map((s, i) => s.evalsha - this.s0[i].evalsha)),
      redisCpuUs: sum(s1.map((s, i) => (s.cpuS - this.s0[i].cpuS) * 1e6)),
      cmdMix: mixDelta(this.s0, s1),
      machineBusyUs: busy,
    };
  }
}

// ---------------------------------------------------------------------------
// Loops

/** `names.length` concurrent loops of lock+unlock, one name each, for durationMs. */
async function cycleLoops(runner: Runner, names: string[], durationMs: number, graceMs: number, samples: number[] | null) {
  const deadline = performance.now() + durationMs;
  let ops = 0;
  let errors = 0;
  const loops = names.map(async (name) => {
    const w = runner.worker(name);
    for (let i = 0; i < MAX_OPS_PER_LOOP && performance.now() < deadline; i++) {
      const t0 = performance.now();
      try {
        await w.acquire();
        await w.release();
      } catch (e) {
        errors++;
        noteError('cycle', e);
        await sleep(1);
        continue;
      }
      samples?.push(performance.now() - t0);
      ops++;
    }
  });
  const stuck = await settleWithin(loops, deadline + graceMs);
  return { ops, errors, stuck };
}

interface ContendedRun {
  /** Critical sections entered before the deadline. */
  cs: number;
  /** All critical sections (also those entered after the deadline by waiters). */
  csAll: number;
  perWorker: number[];
  handoffs: number;
  overlaps: number;
  errors: number;
  stuck: number;
  waits: number[];
}

/** `workers` loops on one name: lock, setImmediate, unlock, think; for durationMs. */
async function contendedLoops(runner: Runner, name: string, workers: number, durationMs: number, thinkMs: number, graceMs: number): Promise<ContendedRun> {
  const deadline = performance.now() + durationMs;
  const perWorker = new Array<number>(workers).fill(0);
  const waitingSince = new Array<number>(workers).fill(NaN);
  const waits: number[] = [];
  let inside = false;
  let last = -1;
  let handoffs = 0;
  let overlaps = 0;
  let errors = 0;
  let csAll = 0;
  const loops = perWorker.map(async (_, i) => {
    const w = runner.worker(name);
    for (let n = 0; n < MAX_OPS_PER_LOOP && performance.now() < deadline; n++) {
      const t0 = performance.now();
      waitingSince[i] = t0;
      try {
        await w.acquire();
      } catch (e) {
        waitingSince[i] = NaN;
        errors++;
        noteError('contended acquire', e);
        await sleep(1);
        continue;
      }
      const t1 = performance.now();
      waitingSince[i] = NaN;
      waits.push(t1 - t0);
      csAll++;
      if (inside) overlaps++;
      inside = true;
      if (t1 < deadline) {
        perWorker[i]++;
        if (last !== -1 && last !== i) handoffs++;
        last = i;
      }
      await immediate();
      inside = false;
      try {
        await w.release();
      } catch (e) {
        errors++;
        noteError('contended release', e);
      }
      if (thinkMs > 0) await sleep(thinkMs);
    }
  });
  const stuck = await settleWithin(loops, deadline + graceMs);
  const end = performance.now();
  // Waiters abandoned at the end count with the time they had waited so far (a lower bound).
  for (const t of waitingSince) if (!Number.isNaN(t)) waits.push(end - t);
  return { cs: sum(perWorker), csAll, perWorker: [...perWorker], handoffs, overlaps, errors, stuck, waits };
}

// ---------------------------------------------------------------------------
// Results

interface RoundRecord {
  impl: string;
  round: number;
  opsPerSec: number;
  ops: number;
  errors: number;
  stuck: number;
  cost: Cost;
  /** Operations the cost is divided by. */
  costOps: number;
  perWorker?: number[];
  handoffsPerSec?: number;
  overlaps?: number;
  /** Measured twice: the first attempt was disturbed by other processes (the less disturbed one is kept). */
  retried?: boolean;
}

interface Summary {
  impl: string;
  label: string;
  family: Family;
  opsPerSec: number;
  opsMin: number;
  opsMax: number;
  ratio: number;
  p50: number;
  p99: number;
  max: number;
  p99Ratio: number;
  rtPerOp: number;
  cmdsPerOp: number;
  evalshaPerOp: number;
  nodeCpuUsPerOp: number;
  cpuRatio: number;
  redisCpuUsPerOp: number;
  errors: number;
  stuck: number;
  /** Most CPU other processes used during one of this implementation's runs, in cores. */
  foreignCoresMax: number;
  // contended only
  perWorkerMin?: number;
  perWorkerMax?: number;
  worstSpread?: number;
  handoffsPerSec?: number;
  overlaps?: number;
}

interface ScenarioResult {
  id: string;
  title: string;
  kind: 'cycle' | 'contended';
  /** What the latency columns mean. */
  latency: 'cycle' | 'wait';
  floor: string;
  params: Record<string, unknown>;
  summaries: Summary[];
  rounds: RoundRecord[];
}

function summarize(impls: ImplDef[], floor: string, records: RoundRecord[], samples: Map<string, number[]>): Summary[] {
  const byImpl = (id: string) => records.filter((r) => r.impl === id);
  const floorRecs = byImpl(floor);
  const floorSamples = percentiles(samples.get(floor) ?? []);
  const perOp = (recs: RoundRecord[], pick: (c: Cost) => number) => sum(recs.map((r) => pick(r.cost))) / Math.max(1, sum(recs.map((r) => r.costOps)));
  const floorCpu = perOp(floorRecs, (c) => c.nodeCpuUs);
  return impls.map((impl) => {
    const recs = byImpl(impl.id);
    const ops = recs.map((r) => r.opsPerSec);
    const ratios = recs.map((r) => {
      const f = floorRecs.find((x) => x.round === r.round);
      return f && f.opsPerSec > 0 ? r.opsPerSec / f.opsPerSec : NaN;
    });
    const pct = percentiles(samples.get(impl.id) ?? []);
    const s: Summary = {
      impl: impl.id,
      label: impl.label,
      family: impl.family,
      opsPerSec: median(ops),
      opsMin: Math.min(...ops),
      opsMax: Math.max(...ops),
      ratio: median(ratios),
      ...pct,
      p99Ratio: pct.p99 / floorSamples.p99,
      rtPerOp: perOp(recs, (c) => c.sent),
      cmdsPerOp: perOp(recs, (c) => c.redisCmds),
      evalshaPerOp: perOp(recs, (c) => c.evalsha),
      nodeCpuUsPerOp: perOp(recs, (c) => c.nodeCpuUs),
      cpuRatio: perOp(recs, (c) => c.nodeCpuUs) / floorCpu,
      redisCpuUsPerOp: perOp(recs, (c) => c.redisCpuUs),
      errors: sum(recs.map((r) => r.errors)),
      stuck: sum(recs.map((r) => r.stuck)),
      foreignCoresMax: Math.max(...recs.map((r) => foreignCores(r.cost))),
    };
    if (recs.some((r) => r.perWorker)) {
      // Starvation is judged within a round: min/max of the round with the worst max/min.
      const worst = recs.reduce((a, b) => (spread(b.perWorker ?? []) > spread(a.perWorker ?? []) ? b : a));
      s.perWorkerMin = Math.min(...(worst.perWorker ?? []));
      s.perWorkerMax = Math.max(...(worst.perWorker ?? []));
      s.worstSpread = spread(worst.perWorker ?? []);
      s.handoffsPerSec = median(recs.map((r) => r.handoffsPerSec ?? 0));
      s.overlaps = sum(recs.map((r) => r.overlaps ?? 0));
    }
    return s;
  });
}

/** max/min critical sections per worker (Infinity when one got none). */
function spread(perWorker: number[]): number {
  if (perWorker.length === 0) return NaN;
  const min = Math.min(...perWorker);
  return min === 0 ? Infinity : Math.max(...perWorker) / min;
}

// ---------------------------------------------------------------------------
// Scenarios run in this process

interface Env {
  cfg: Config;
  /** Implementations on one master (the floor first), and in quorum mode. */
  impls: ImplDef[];
  quorumImpls: ImplDef[];
  single: RedisServer;
  masters: RedisServer[];
  admin: Redis;
  masterAdmins: Redis[];
}

async function openRunner(impl: ImplDef, ports: number[]): Promise<Runner> {
  return withTimeout(impl.open(ports), 20_000, `open ${impl.id}`);
}

async function closeRunner(impl: ImplDef, runner: Runner): Promise<void> {
  await withTimeout(runner.close(), 10_000, `close ${impl.id}`).catch((e) => noteError(`close ${impl.id}`, e));
}

async function cycleScenario(
  env: Env,
  id: string,
  title: string,
  impls: ImplDef[],
  ports: number[],
  admins: Redis[],
  loops: number,
  durationMs: number,
): Promise<ScenarioResult> {
  const { cfg } = env;
  const records: RoundRecord[] = [];
  const samples = new Map<string, number[]>(impls.map((i) => [i.id, []]));
  const meter = new Meter(admins);
  for (let round = 1; round <= cfg.rounds; round++) {
    for (const impl of impls) {
      let attemptNo = 0;
      const { rec, samples: got } = await measured(`${id} round ${round} ${impl.id}`, async () => {
        const names = Array.from({ length: loops }, (_, k) => `${id}:${round}:${++attemptNo}:${k}`);
        const lat: number[] = [];
        const runner = await openRunner(impl, ports);
        try {
          await cycleLoops(runner, names, cfg.warmMs, cfg.graceMs, null);
          await meter.start();
          const r = await cycleLoops(runner, names, durationMs, cfg.graceMs, lat);
          const cost = await meter.stop();
          const rec: RoundRecord = { impl: impl.id, round, opsPerSec: (r.ops / cost.ms) * 1000, ops: r.ops, errors: r.errors, stuck: r.stuck, cost, costOps: r.ops };
          log(`${id} round ${round}/${cfg.rounds} ${impl.id.padEnd(24)} ${Math.round(rec.opsPerSec).toString().padStart(7)} ops/s${r.errors ? `, ${r.errors} errors` : ''}${r.stuck ? `, ${r.stuck} stuck` : ''}${foreignNote(cost)}`);
          return { rec, samples: lat };
        } finally {
          await closeRunner(impl, runner);
        }
      });
      records.push(rec);
      samples.get(impl.id)!.push(...got);
    }
  }
  return {
    id,
    title,
    kind: 'cycle',
    latency: 'cycle',
    floor: impls[0].id,
    params: { loops, durationMs, rounds: cfg.rounds, warmMs: cfg.warmMs, leaseMs: LEASE },
    summaries: summarize(impls, impls[0].id, records, samples),
    rounds: records,
  };
}

/**
 * Each round runs in a fresh child process (implementations in turn, as everywhere):
 * a peer that leaves timers behind (node-redisson's wait timeouts fire up to a lease
 * later) cannot disturb the next round's measurements.
 */
async function workersScenario(env: Env): Promise<ScenarioResult> {
  const { cfg, impls } = env;
  const workers = 16;
  const records: RoundRecord[] = [];
  const samples = new Map<string, number[]>(impls.map((i) => [i.id, []]));
  for (let round = 1; round <= cfg.rounds; round++) {
    const child = Child.fork('worker');
    try {
      for (const impl of impls) {
        let attemptNo = 0;
        const { rec, samples: got } = await measured(`workers16 round ${round} ${impl.id}`, async () => {
          const reply = await child.request(
            { type: 'contended', impl: impl.id, port: env.single.port, name: `workers16:${round}:${++attemptNo}`, workers, durationMs: cfg.contMs, graceMs: cfg.graceMs, warmMs: cfg.warmMs },
            cfg.contMs + cfg.graceMs + 60_000,
          );
          const r = reply.run as ContendedRun;
          const cost = reply.cost as Cost;
          const rec: RoundRecord = {
            impl: impl.id,
            round,
            opsPerSec: (r.cs / cfg.contMs) * 1000,
            ops: r.cs,
            errors: r.errors,
            stuck: r.stuck,
            cost,
            costOps: Math.max(1, r.csAll),
            perWorker: r.perWorker,
            handoffsPerSec: (r.handoffs / cfg.contMs) * 1000,
            overlaps: r.overlaps,
          };
          const pw = `${Math.min(...r.perWorker)}-${Math.max(...r.perWorker)}`;
          log(`workers16 round ${round}/${cfg.rounds} ${impl.id.padEnd(16)} ${Math.round(rec.opsPerSec).toString().padStart(6)} CS/s, per worker ${pw}${r.errors ? `, ${r.errors} errors` : ''}${r.stuck ? `, ${r.stuck} stuck` : ''}${r.overlaps ? `, ${r.overlaps} OVERLAPS` : ''}${foreignNote(cost)}`);
          return { rec, samples: r.waits };
        });
        records.push(rec);
        samples.get(impl.id)!.push(...got);
      }
    } finally {
      child.kill();
    }
  }
  return {
    id: 'workers16',
    title: '3. 16 workers on one key, one process (critical section: setImmediate)',
    kind: 'contended',
    latency: 'wait',
    floor: 'raw',
    params: { workers, durationMs: cfg.contMs, rounds: cfg.rounds, freshProcessPerRound: true, rawPollMs: POLL_MS, peerRetryMs: PEER_RETRY_MS, leaseMs: LEASE },
    summaries: summarize(impls, 'raw', records, samples),
    rounds: records,
  };
}

// ---------------------------------------------------------------------------
// Child processes (scenario 4, and scenario 6 with --expose-gc)

interface ChildReply {
  id: number;
  ok: boolean;
  error?: string;
  [key: string]: unknown;
}

class Child {
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (r: ChildReply) => void; reject: (e: Error) => void }>();
  private exited = false;
  private unhandled = 0;
  private warnings = 0;

  constructor(readonly proc: ChildProcess) {
    proc.on('message', (m: ChildReply) => {
      this.unhandled = Number(m.unhandled ?? this.unhandled);
      this.warnings = Number(m.warnings ?? this.warnings);
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m);
      else p.reject(new Error(`child ${proc.pid}: ${m.error}`));
    });
    proc.on('exit', (code, signal) => {
      this.exited = true;
      childCounts.unhandled += this.unhandled;
      childCounts.warnings += this.warnings;
      for (const p of this.pending.values()) p.reject(new Error(`child ${proc.pid} exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  static fork(mode: string, extraExecArgv: string[] = []): Child {
    const loaderArgs = process.execArgv.some((a) => a.includes('tsx')) ? process.execArgv : ['--import', 'tsx'];
    const proc = fork(__filename, [`--child=${mode}`], {
      execArgv: [...loaderArgs, ...extraExecArgv],
      // The child's stdout goes to our stderr: stdout is for the markdown report.
      stdio: ['ignore', 2, 2, 'ipc'],
    });
    return new Child(proc);
  }

  request(message: Record<string, unknown>, timeoutMs: number): Promise<ChildReply> {
    if (this.exited) return Promise.reject(new Error(`child ${this.proc.pid} has exited`));
    const id = ++this.seq;
    const reply = new Promise<ChildReply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.proc.send({ ...message, id });
    });
    return withTimeout(reply, timeoutMs, `child ${this.proc.pid} ${String(message.type)}`);
  }

  /** Asks the child to exit (it exits when the IPC channel closes: --cpu-prof profiles get written), SIGKILL after 3 s. */
  kill(): void {
    if (this.exited) return;
    if (this.proc.connected) this.proc.disconnect();
    setTimeout(() => {
      if (!this.exited) this.proc.kill('SIGKILL');
    }, 3_000).unref();
  }
}

interface ProcRunReply extends ChildReply {
  acq: number[];
  rel: number[];
  waits: number[];
  errors: number;
  stuck: number;
  cpuUs: number;
  sent: number;
}

/** 4 processes, one worker each; fresh processes for every round (see workersScenario). */
async function processesScenario(env: Env, thinkMs: number): Promise<ScenarioResult> {
  const { cfg, impls } = env;
  const records: RoundRecord[] = [];
  const samples = new Map<string, number[]>(impls.map((i) => [i.id, []]));
  const meter = new Meter([env.admin]);
  const id = `procs4-${thinkMs}ms`;
  const children: Child[] = [];
  for (let round = 1; round <= cfg.rounds; round++) {
    children.forEach((c) => c.kill());
    children.length = 0;
    for (let i = 0; i < 4; i++) children.push(Child.fork('worker'));
    for (const impl of impls) {
      let attemptNo = 0;
      const { rec, samples: got } = await measured(`${id} round ${round} ${impl.id}`, async () => {
        const name = `${id}:${round}:${++attemptNo}`;
        await Promise.all(children.map((c) => c.request({ type: 'open', impl: impl.id, ports: [env.single.port], name, warmMs: cfg.warmMs }, 30_000)));
        try {
          await meter.start();
          const startAtUs = hrUs() + 150_000;
          const replies = (await Promise.all(
            children.map((c) => c.request({ type: 'go', startAtUs, durationMs: cfg.procMs, thinkMs, graceMs: cfg.graceMs }, cfg.procMs + cfg.graceMs + 30_000)),
          )) as ProcRunReply[];
          const cost = await meter.stop();
          // Node cost is the children's; the parent only waited.
          cost.nodeCpuUs = sum(replies.map((r) => r.cpuUs));
          cost.sent = sum(replies.map((r) => r.sent));
          const deadlineUs = startAtUs + cfg.procMs * 1000;
          const events = replies.flatMap((r, p) => r.acq.map((a, k) => ({ p, acq: a, rel: r.rel[k] ?? Infinity }))).sort((a, b) => a.acq - b.acq);
          let overlaps = 0;
          let handoffs = 0;
          let last = -1;
          const perProc = children.map(() => 0);
          events.forEach((e, k) => {
            if (k > 0 && e.acq < events[k - 1].rel) overlaps++;
            if (e.acq < deadlineUs) {
              perProc[e.p]++;
              if (last !== -1 && last !== e.p) handoffs++;
              last = e.p;
            }
          });
          const cs = sum(perProc);
          const rec: RoundRecord = {
            impl: impl.id,
            round,
            opsPerSec: (cs / cfg.procMs) * 1000,
            ops: cs,
            errors: sum(replies.map((r) => r.errors)),
            stuck: sum(replies.map((r) => r.stuck)),
            cost,
            costOps: Math.max(1, events.length),
            perWorker: perProc,
            handoffsPerSec: (handoffs / cfg.procMs) * 1000,
            overlaps,
          };
          log(`${id} round ${round}/${cfg.rounds} ${impl.id.padEnd(16)} ${Math.round(rec.opsPerSec).toString().padStart(6)} CS/s, per process ${perProc.join('/')}${rec.errors ? `, ${rec.errors} errors` : ''}${rec.stuck ? `, ${rec.stuck} stuck` : ''}${overlaps ? `, ${overlaps} OVERLAPS` : ''}${foreignNote(cost)}`);
          return { rec, samples: replies.flatMap((r) => r.waits) };
        } finally {
          await Promise.all(children.map((c) => c.request({ type: 'close' }, 30_000).catch((e) => noteError('child close', e))));
        }
      });
      records.push(rec);
      samples.get(impl.id)!.push(...got);
    }
  }
  children.forEach((c) => c.kill());
  return {
    id,
    title: `4. 4 processes on one key, ${thinkMs} ms think time`,
    kind: 'contended',
    latency: 'wait',
    floor: 'raw',
    params: { processes: 4, thinkMs, durationMs: cfg.procMs, rounds: cfg.rounds, freshProcessesPerRound: true, rawPollMs: POLL_MS, peerRetryMs: PEER_RETRY_MS },
    summaries: summarize(impls, 'raw', records, samples),
    rounds: records,
  };
}

/** Child side of scenario 4: one worker per process. */
async function childLoop(): Promise<void> {
  let impl: ImplDef | undefined;
  let runner: Runner | undefined;
  let worker: Worker | undefined;
  const handlers: Record<string, (m: Record<string, unknown>) => Promise<Record<string, unknown>>> = {
    async open(m) {
      impl = implById(String(m.impl));
      runner = await openRunner(impl, m.ports as number[]);
      worker = runner.worker(String(m.name));
      // Warm up (connections, scripts) uncontended, on a key of this process only.
      await cycleLoops(runner, [`${String(m.name)}:warm:${process.pid}`], Number(m.warmMs), 1_000, null);
      return {};
    },
    /** Scenario 3, measured entirely here (server counters through our own admin connection). */
    async contended(m) {
      const contendedImpl = implById(String(m.impl));
      const port = Number(m.port);
      const name = String(m.name);
      const graceMs = Number(m.graceMs);
      const admin = await connect(port);
      const contendedRunner = await openRunner(contendedImpl, [port]);
      try {
        await cycleLoops(contendedRunner, [name], Number(m.warmMs), graceMs, null);
        const meter = new Meter([admin]);
        await meter.start();
        const run = await contendedLoops(contendedRunner, name, Number(m.workers), Number(m.durationMs), 0, graceMs);
        const cost = await meter.stop();
        return { run, cost };
      } finally {
        await closeRunner(contendedImpl, contendedRunner);
        await quitAll([admin]);
      }
    },
    async go(m) {
      if (!worker) throw new Error('go before open');
      const w = worker;
      const startAtUs = Number(m.startAtUs);
      const deadlineUs = startAtUs + Number(m.durationMs) * 1000;
      const thinkMs = Number(m.thinkMs);
      await sleep(Math.max(0, (startAtUs - hrUs()) / 1000));
      const cpu0 = process.cpuUsage();
      const sent0 = sentCommands;
      const acq: number[] = [];
      const rel: number[] = [];
      const waits: number[] = [];
      let errors = 0;
      let waitingSince = NaN;
      const loop = (async () => {
        for (let n = 0; n < MAX_OPS_PER_LOOP && hrUs() < deadlineUs; n++) {
          const t0 = hrUs();
          waitingSince = t0;
          try {
            await w.acquire();
          } catch (e) {
            waitingSince = NaN;
            errors++;
            noteError('child acquire', e);
            await sleep(1);
            continue;
          }
          const t1 = hrUs();
          waitingSince = NaN;
          acq.push(t1);
          waits.push((t1 - t0) / 1000);
          await immediate();
          rel.push(hrUs());
          try {
            await w.release();
          } catch (e) {
            errors++;
            noteError('child release', e);
          }
          if (thinkMs > 0) await sleep(thinkMs);
        }
      })();
      const untilMs = performance.now() + (deadlineUs - hrUs()) / 1000 + Number(m.graceMs);
      const stuck = await settleWithin([loop], untilMs);
      if (!Number.isNaN(waitingSince)) waits.push((hrUs() - waitingSince) / 1000);
      const cpu = process.cpuUsage(cpu0);
      // A stuck loop may still be waiting: it needs a fresh worker next time.
      if (stuck) worker = undefined;
      return { acq, rel, waits, errors, stuck, cpuUs: cpu.user + cpu.system, sent: sentCommands - sent0 };
    },
    async close() {
      if (impl && runner) await closeRunner(impl, runner);
      impl = undefined;
      runner = undefined;
      worker = undefined;
      return {};
    },
    watchdog: watchdogChild,
  };
  let queue = Promise.resolve();
  process.on('message', (m: Record<string, unknown>) => {
    queue = queue.then(async () => {
      try {
        const handler = handlers[String(m.type)];
        if (!handler) throw new Error(`unknown request ${String(m.type)}`);
        const reply = await handler(m);
        process.send!({ id: m.id, ok: true, ...reply, unhandled: unhandledRejections, warnings: warningCount() });
      } catch (e) {
        process.send!({ id: m.id, ok: false, error: e instanceof Error ? (e.stack ?? e.message) : String(e), unhandled: unhandledRejections, warnings: warningCount() });
      }
    });
  });
}

// ---------------------------------------------------------------------------
// Scenario 6: watchdog with many held locks (child process with --expose-gc)

interface WatchdogResult {
  locks: number;
  watchdogTimeoutMs: number;
  acquireMs: number;
  periods: number;
  ticks: number;
  renewals: number;
  evalsha: number;
  redisCmds: number;
  rtPerTick: number;
  renewalsPerTick: number;
  rtPer100Renewals: number;
  nodeCpuMsPerTick: number;
  nodeCpuUsPerRenewal: number;
  nodeCpuMsPerPeriod: number;
  redisCpuMsPerPeriod: number;
  lost: number;
  renewalFailed: number;
  heapBaseBytes: number;
  heapPerHandleBytes: number;
  heapPerHeldLockBytes: number;
  heapAfterRenewalsPerLockBytes: number;
  heapResidualPerLockBytes: number;
  cycles: number;
  cyclesPerSec: number;
  heapSamples: { cycles: number; heapUsed: number }[];
  heapGrowthBytes: number;
  heapGrowthBytesPer1kCycles: number;
}

async function watchdogChild(m: Record<string, unknown>): Promise<Record<string, unknown>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('watchdog child needs --expose-gc');
  const fullGc = () => {
    gc();
    gc();
  };
  const heap = () => {
    fullGc();
    return process.memoryUsage().heapUsed;
  };
  const port = Number(m.port);
  const n = Number(m.locks);
  const periods = Number(m.periods);
  const cycles = Number(m.cycles);
  const conn = await connect(port);
  const admin = await connect(port);
  const client = new LockClient(conn, { watchdogTimeout: WATCHDOG_TIMEOUT });
  let renewals = 0;
  let ticks = 0;
  let lastRenewal = -Infinity;
  let lost = 0;
  let renewalFailed = 0;
  client.on('renewed', () => {
    renewals++;
    const t = performance.now();
    // One batch settles in one synchronous loop: a gap starts the next tick.
    if (t - lastRenewal > 5) ticks++;
    lastRenewal = t;
  });
  client.on('lost', () => void lost++);
  client.on('renewalFailed', () => void renewalFailed++);
  client.on('error', (e) => noteError('watchdog child', e));
  try {
    const warm = client.getLock('wd:warm');
    for (let i = 0; i < 2_000; i++) {
      await warm.lock();
      await warm.unlock();
    }
    const heapBase = heap();
    let handles = Array.from({ length: n }, (_, i) => client.getLock(`wd:${i}`));
    const heapHandles = heap();
    const t0 = performance.now();
    await pool(n, 200, (i) => handles[i].lock());
    const acquireMs = performance.now() - t0;
    const heapHeld = heap();
    log(`watchdog: ${n} locks held (acquired in ${Math.round(acquireMs)} ms), measuring ${periods} renewal periods`);
    // Steady state: every hold has had its first renewal.
    await sleep(WATCHDOG_TIMEOUT / 3 + 300);
    const s0 = await snapServer(admin);
    const cpu0 = process.cpuUsage();
    const r0 = renewals;
    const k0 = ticks;
    await sleep((periods * WATCHDOG_TIMEOUT) / 3);
    const cpu = process.cpuUsage(cpu0);
    const s1 = await snapServer(admin);
    const dRenewals = renewals - r0;
    const dTicks = Math.max(1, ticks - k0);
    const evalsha = s1.evalsha - s0.evalsha;
    const cpuUs = cpu.user + cpu.system;
    const heapRenewing = heap();
    await pool(n, 200, (i) => handles[i].unlock());
    handles = [];
    const heapReleased = heap();

    // Heap growth over many lock/unlock cycles: 64 loops on 64 keys, 10 segments.
    const names = Array.from({ length: 64 }, (_, i) => `wd:cycle:${i}`);
    const locks = names.map((name) => client.getLock(name));
    const heapSamples: { cycles: number; heapUsed: number }[] = [{ cycles: 0, heapUsed: heap() }];
    const segment = Math.ceil(cycles / 10);
    const perLoop = Math.ceil(segment / locks.length);
    let done = 0;
    const c0 = performance.now();
    const giveUp = c0 + 240_000;
    for (let s = 0; s < 10 && performance.now() < giveUp; s++) {
      await Promise.all(
        locks.map(async (lock) => {
          for (let i = 0; i < perLoop; i++) {
            await lock.lock();
            await lock.unlock();
          }
        }),
      );
      done += perLoop * locks.length;
      heapSamples.push({ cycles: done, heapUsed: heap() });
      log(`watchdog: heap after ${done} cycles ${(heapSamples[heapSamples.length - 1].heapUsed / 1024 / 1024).toFixed(2)} MB`);
    }
    const cyclesMs = performance.now() - c0;
    // Growth after the first segment (warm-up), with a least-squares slope.
    const tail = heapSamples.slice(1);
    const growth = tail[tail.length - 1].heapUsed - tail[0].heapUsed;
    const mx = sum(tail.map((s) => s.cycles)) / tail.length;
    const my = sum(tail.map((s) => s.heapUsed)) / tail.length;
    const slope = sum(tail.map((s) => (s.cycles - mx) * (s.heapUsed - my))) / Math.max(1, sum(tail.map((s) => (s.cycles - mx) ** 2)));
    const result: WatchdogResult = {
      locks: n,
      watchdogTimeoutMs: WATCHDOG_TIMEOUT,
      acquireMs,
      periods,
      ticks: dTicks,
      renewals: dRenewals,
      evalsha,
      redisCmds: s1.cmds - s0.cmds - 1,
      rtPerTick: evalsha / dTicks,
      renewalsPerTick: dRenewals / dTicks,
      rtPer100Renewals: (evalsha / Math.max(1, dRenewals)) * 100,
      nodeCpuMsPerTick: cpuUs / 1000 / dTicks,
      nodeCpuUsPerRenewal: cpuUs / Math.max(1, dRenewals),
      nodeCpuMsPerPeriod: cpuUs / 1000 / periods,
      redisCpuMsPerPeriod: ((s1.cpuS - s0.cpuS) * 1000) / periods,
      lost,
      renewalFailed,
      heapBaseBytes: heapBase,
      heapPerHandleBytes: (heapHandles - heapBase) / n,
      heapPerHeldLockBytes: (heapHeld - heapBase) / n,
      heapAfterRenewalsPerLockBytes: (heapRenewing - heapBase) / n,
      heapResidualPerLockBytes: (heapReleased - heapBase) / n,
      cycles: done,
      cyclesPerSec: (done / cyclesMs) * 1000,
      heapSamples,
      heapGrowthBytes: growth,
      heapGrowthBytesPer1kCycles: slope * 1000,
    };
    return { result };
  } finally {
    await client.close();
    await quitAll([conn, admin]);
  }
}

async function watchdogScenario(env: Env): Promise<WatchdogResult> {
  const child = Child.fork('worker', ['--expose-gc']);
  try {
    const reply = await child.request(
      { type: 'watchdog', port: env.single.port, locks: env.cfg.wdLocks, periods: env.cfg.wdPeriods, cycles: env.cfg.wdCycles },
      env.cfg.mode === 'quick' ? 60_000 : 360_000,
    );
    return reply.result as WatchdogResult;
  } finally {
    child.kill();
  }
}

// ---------------------------------------------------------------------------
// Report

const f = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : x === Infinity ? '∞' : '–');
const fi = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '–');
const fx = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '–');

function mdTable(headers: string[], rows: string[][]): string {
  const align = headers.map((_, i) => (i === 0 ? ':--' : '--:'));
  return [headers, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

function scenarioTable(s: ScenarioResult): string {
  if (s.kind === 'cycle') {
    return mdTable(
      ['implementation', 'ops/s', '× floor', 'ops/s range', 'p50 ms', 'p99 ms', 'p99 × floor', 'RT/cycle', 'Redis cmds/cycle', 'Node CPU µs/cycle', 'CPU × floor', 'Redis CPU µs/cycle', 'errors'],
      s.summaries.map((x) => [
        x.label,
        fi(x.opsPerSec),
        fx(x.ratio),
        `${fi(x.opsMin)}–${fi(x.opsMax)}`,
        f(x.p50, 3),
        f(x.p99, 3),
        fx(x.p99Ratio),
        f(x.rtPerOp),
        f(x.cmdsPerOp, 1),
        f(x.nodeCpuUsPerOp, 1),
        fx(x.cpuRatio),
        f(x.redisCpuUsPerOp, 1),
        `${x.errors}${x.stuck ? ` (${x.stuck} stuck)` : ''}`,
      ]),
    );
  }
  return mdTable(
    ['implementation', 'CS/s', '× floor', 'wait p50 ms', 'p99 ms', 'max ms', 'CS per worker min–max (worst round)', 'max/min', 'handoffs/s', 'RT/CS', 'Node CPU µs/CS', 'errors (stuck)', 'overlaps'],
    s.summaries.map((x) => [
      x.label,
      fi(x.opsPerSec),
      fx(x.ratio),
      f(x.p50, 3),
      f(x.p99, 2),
      f(x.max, 1),
      `${fi(x.perWorkerMin ?? NaN)}–${fi(x.perWorkerMax ?? NaN)}`,
      f(x.worstSpread ?? NaN),
      fi(x.handoffsPerSec ?? NaN),
      f(x.rtPerOp),
      f(x.nodeCpuUsPerOp, 1),
      `${x.errors}${x.stuck ? ` (${x.stuck})` : ''}`,
      String(x.overlaps ?? 0),
    ]),
  );
}

function watchdogTable(w: WatchdogResult): string {
  const kb = (b: number) => `${(b / 1024).toFixed(2)} KB`;
  return mdTable(
    ['metric', 'value'],
    [
      ['held locks / watchdogTimeout', `${w.locks.toLocaleString('en-US')} / ${w.watchdogTimeoutMs} ms (renewal every ${Math.round(w.watchdogTimeoutMs / 3)} ms)`],
      ['acquiring them (200 in flight)', `${fi(w.acquireMs)} ms`],
      ['measured', `${w.periods} renewal periods: ${w.ticks} ticks, ${w.renewals.toLocaleString('en-US')} renewals, ${w.evalsha} EVALSHA`],
      ['Redis round trips per tick', f(w.rtPerTick, 1)],
      ['renewals per tick', fi(w.renewalsPerTick)],
      ['round trips per 100 renewals', f(w.rtPer100Renewals, 3)],
      ['Node CPU per tick', `${f(w.nodeCpuMsPerTick, 2)} ms (${f(w.nodeCpuUsPerRenewal, 2)} µs per renewal; ${f(w.nodeCpuMsPerPeriod, 1)} ms per period)`],
      ['Redis CPU per period', `${f(w.redisCpuMsPerPeriod, 1)} ms`],
      ['lost / renewalFailed', `${w.lost} / ${w.renewalFailed}`],
      ['heap per Lock handle (getLock)', kb(w.heapPerHandleBytes)],
      ['heap per held lock (incl. its handle)', kb(w.heapPerHeldLockBytes)],
      ['  … after renewals', kb(w.heapAfterRenewalsPerLockBytes)],
      ['  … left after unlock of all (handles dropped)', kb(w.heapResidualPerLockBytes)],
      ['lock+unlock cycles (64 keys in parallel)', `${w.cycles.toLocaleString('en-US')} at ${fi(w.cyclesPerSec)}/s`],
      ['heap after gc, first → last segment', `${(w.heapSamples[1]?.heapUsed / 1048576).toFixed(2)} → ${(w.heapSamples[w.heapSamples.length - 1].heapUsed / 1048576).toFixed(2)} MB`],
      ['heap growth after warm-up', `${(w.heapGrowthBytes / 1024).toFixed(1)} KB (slope ${f(w.heapGrowthBytesPer1kCycles, 1)} B per 1k cycles)`],
    ],
  );
}

interface Target {
  target: string;
  measured: string;
  pass: boolean | undefined;
}

function evaluateTargets(results: Map<string, ScenarioResult>, wd: WatchdogResult | undefined): Target[] {
  const out: Target[] = [];
  const hf = (s: ScenarioResult | undefined) => s?.summaries.find((x) => x.family === 'holdfast');
  for (const id of ['uncontended', 'parallel64']) {
    const s = results.get(id);
    const h = hf(s);
    if (!s || !h) continue;
    out.push({ target: `${id}: holdfast ≥ 0.95× floor`, measured: fx(h.ratio), pass: h.ratio >= 0.95 });
    const peers = s.summaries.filter((x) => x.family !== 'holdfast' && x.family !== 'holdfast-fair' && x.family !== 'raw');
    if (peers.length === 0) continue;
    const best = peers.reduce((a, b) => (b.opsPerSec > a.opsPerSec ? b : a));
    out.push({ target: `${id}: holdfast ahead of every peer (ops/s)`, measured: `${fi(h.opsPerSec)} vs best peer ${best.impl} ${fi(best.opsPerSec)}`, pass: h.opsPerSec > best.opsPerSec });
  }
  const w16 = hf(results.get('workers16'));
  if (w16) {
    out.push({ target: 'workers16: p99 wait ≤ 5 ms', measured: `${f(w16.p99)} ms`, pass: w16.p99 <= 5 });
    out.push({ target: 'workers16: max/min CS per worker ≤ 2', measured: f(w16.worstSpread ?? NaN), pass: (w16.worstSpread ?? Infinity) <= 2 });
  }
  const p2 = hf(results.get('procs4-2ms'));
  if (p2) out.push({ target: 'procs4, 2 ms think: p99 wait ≤ 4 ms', measured: `${f(p2.p99)} ms`, pass: p2.p99 <= 4 });
  const p0 = hf(results.get('procs4-0ms'));
  if (p0) {
    out.push({
      target: 'procs4, 0 ms think: no starvation (every process served, max/min ≤ 2)',
      measured: `per process ${fi(p0.perWorkerMin ?? NaN)}–${fi(p0.perWorkerMax ?? NaN)}, worst max/min ${f(p0.worstSpread ?? NaN)}`,
      pass: (p0.perWorkerMin ?? 0) > 0 && (p0.worstSpread ?? Infinity) <= 2,
    });
  }
  const q = hf(results.get('quorum'));
  if (q) out.push({ target: 'quorum: holdfast ≥ 0.97× raw parallel quorum', measured: fx(q.ratio), pass: q.ratio >= 0.97 });
  if (wd) {
    out.push({ target: 'watchdog: ≤ 1 round trip per 100 held locks per tick', measured: `${f(wd.rtPer100Renewals, 3)} per 100 renewals (${f(wd.rtPerTick, 1)} RT/tick)`, pass: wd.rtPer100Renewals <= 1 });
    out.push({
      target: 'watchdog: heap ≤ 1 KB per held lock (its Lock handle included)',
      measured: `${(wd.heapPerHeldLockBytes / 1024).toFixed(2)} KB (handle ${(wd.heapPerHandleBytes / 1024).toFixed(2)} KB + hold state ${((wd.heapPerHeldLockBytes - wd.heapPerHandleBytes) / 1024).toFixed(2)} KB)`,
      pass: wd.heapPerHeldLockBytes <= 1024,
    });
    out.push({
      target: 'heap: no growth over the lock/unlock cycles (≤ 256 KB after warm-up)',
      measured: `${(wd.heapGrowthBytes / 1024).toFixed(1)} KB over ${wd.cycles.toLocaleString('en-US')} cycles`,
      pass: wd.heapGrowthBytes <= 256 * 1024,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------
// SVG chart (hand-written)

const COLORS: Record<Family, string> = {
  raw: '#6b7280',
  holdfast: '#2563eb',
  'holdfast-fair': '#7c3aed',
  redlock: '#dc2626',
  'redis-semaphore': '#16a34a',
  'node-redisson': '#d97706',
};

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function renderSvg(results: ScenarioResult[], meta: Record<string, unknown>): string {
  const W = 1040;
  const ml = 64;
  const mr = 16;
  const ph = 210;
  const top1 = 96;
  const top2 = top1 + ph + 92;
  const H = top2 + ph + 70;
  const groups = results;
  const gw = (W - ml - mr) / Math.max(1, groups.length);
  const bw = Math.min(24, (gw - 24) / FAMILIES.length);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${ml}" y="26" font-size="17" font-weight="bold">holdfast benchmark</text>`);
  out.push(`<text x="${ml}" y="44" font-size="11" fill="#444">${esc(String(meta.summary ?? ''))}</text>`);
  FAMILIES.forEach((fam, i) => {
    const x = ml + i * 135;
    out.push(`<rect x="${x}" y="56" width="12" height="12" fill="${COLORS[fam]}"/>`);
    out.push(`<text x="${x + 17}" y="66" font-size="12">${esc(fam === 'raw' ? 'raw floor' : fam)}</text>`);
  });
  const barX = (g: number, fam: Family) => ml + g * gw + (gw - bw * FAMILIES.length) / 2 + FAMILIES.indexOf(fam) * bw;
  const groupLabels = (y: number) =>
    groups.forEach((s, g) => {
      const label = s.id === 'quorum' ? 'quorum (× raw quorum)' : s.id;
      out.push(`<text x="${ml + g * gw + gw / 2}" y="${y}" font-size="12" text-anchor="middle">${esc(label)}</text>`);
    });

  // Panel 1: ops/s ratio to the floor, linear.
  const ratios = groups.flatMap((s) => s.summaries.map((x) => x.ratio)).filter(Number.isFinite);
  const rmax = Math.max(1.2, Math.ceil(Math.max(...ratios, 1) * 5) / 5);
  const y1 = (v: number) => top1 + ph - (Math.max(0, v) / rmax) * ph;
  out.push(`<text x="${ml}" y="${top1 - 10}" font-size="13" font-weight="bold">Throughput, × raw floor of the same scenario (higher is better)</text>`);
  for (let t = 0; t <= rmax + 1e-9; t += rmax > 3 ? 1 : 0.2) {
    out.push(`<line x1="${ml}" x2="${W - mr}" y1="${y1(t)}" y2="${y1(t)}" stroke="#e5e7eb"/>`);
    out.push(`<text x="${ml - 6}" y="${y1(t) + 4}" font-size="10" text-anchor="end">${t.toFixed(1)}</text>`);
  }
  out.push(`<line x1="${ml}" x2="${W - mr}" y1="${y1(1)}" y2="${y1(1)}" stroke="#111" stroke-dasharray="4 3"/>`);
  groups.forEach((s, g) => {
    for (const x of s.summaries) {
      if (!Number.isFinite(x.ratio)) continue;
      const bx = barX(g, x.family);
      out.push(`<rect x="${bx.toFixed(1)}" y="${y1(x.ratio).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${(top1 + ph - y1(x.ratio)).toFixed(1)}" fill="${COLORS[x.family]}"><title>${esc(`${s.id} ${x.label}: ${fi(x.opsPerSec)} ops/s, ${fx(x.ratio)}`)}</title></rect>`);
      out.push(`<text x="${(bx + (bw - 2) / 2).toFixed(1)}" y="${(y1(x.ratio) - 3).toFixed(1)}" font-size="8.5" text-anchor="middle">${x.ratio.toFixed(2)}</text>`);
    }
  });
  groupLabels(top1 + ph + 16);

  // Panel 2: p99 wait (contended) or p99 lock+unlock latency (uncontended), log scale.
  const p99s = groups.flatMap((s) => s.summaries.map((x) => x.p99)).filter((v) => Number.isFinite(v) && v > 0);
  const lmin = -2;
  const lmax = Math.max(1, Math.ceil(Math.log10(Math.max(...p99s, 1))));
  const y2 = (v: number) => top2 + ph - ((Math.log10(Math.max(v, 10 ** lmin)) - lmin) / (lmax - lmin)) * ph;
  out.push(`<text x="${ml}" y="${top2 - 10}" font-size="13" font-weight="bold">p99 wait (contended) / p99 lock+unlock latency (uncontended), ms, log scale (lower is better)</text>`);
  for (let e = lmin; e <= lmax; e++) {
    out.push(`<line x1="${ml}" x2="${W - mr}" y1="${y2(10 ** e)}" y2="${y2(10 ** e)}" stroke="#e5e7eb"/>`);
    out.push(`<text x="${ml - 6}" y="${y2(10 ** e) + 4}" font-size="10" text-anchor="end">${10 ** e >= 1 ? 10 ** e : (10 ** e).toFixed(-e)}</text>`);
  }
  groups.forEach((s, g) => {
    for (const x of s.summaries) {
      if (!Number.isFinite(x.p99) || x.p99 <= 0) continue;
      const bx = barX(g, x.family);
      out.push(`<rect x="${bx.toFixed(1)}" y="${y2(x.p99).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${(top2 + ph - y2(x.p99)).toFixed(1)}" fill="${COLORS[x.family]}"><title>${esc(`${s.id} ${x.label}: p99 ${f(x.p99, 3)} ms`)}</title></rect>`);
      const label = x.p99 >= 100 ? x.p99.toFixed(0) : x.p99 >= 10 ? x.p99.toFixed(1) : x.p99.toFixed(2);
      out.push(`<text x="${(bx + (bw - 2) / 2).toFixed(1)}" y="${(y2(x.p99) - 3).toFixed(1)}" font-size="8.5" text-anchor="middle">${label}</text>`);
    }
  });
  groupLabels(top2 + ph + 16);
  out.push(`<text x="${ml}" y="${H - 14}" font-size="10" fill="#555">${esc(String(meta.footnote ?? ''))}</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

// ---------------------------------------------------------------------------
// Main

function parseArgs(argv: string[]): { cfg: Config; only: Set<ScenarioId>; svg: boolean; implFilter: Set<string> | undefined } {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stderr.write('usage: tsx scripts/bench.ts [--quick] [--only <scenario>[,...]] [--impl <implementation>[,...]] [--rounds N] [--svg]\n');
    process.stderr.write(`scenarios: ${SCENARIOS.map((s, i) => `${i + 1}=${s}`).join(' ')}\n`);
    process.exit(0);
  }
  const cfg = { ...(argv.includes('--quick') ? QUICK_CONFIG : DEFAULT_CONFIG) };
  const value = (flag: string) => {
    const i = argv.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
    if (i === -1) return undefined;
    const v = argv[i].includes('=') ? argv[i].split('=')[1] : argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
    return v;
  };
  const rounds = value('--rounds');
  if (rounds !== undefined) {
    cfg.rounds = Number(rounds);
    if (!Number.isInteger(cfg.rounds) || cfg.rounds < 1 || cfg.rounds > 20) throw new Error('--rounds must be 1..20');
  }
  const only = new Set<ScenarioId>();
  const onlyArg = value('--only');
  for (const word of onlyArg?.split(',') ?? []) {
    const w = word.trim().toLowerCase();
    const match = /^\d$/.test(w) ? SCENARIOS[Number(w) - 1] : SCENARIOS.find((s) => s === w || s.startsWith(w));
    if (!match) throw new Error(`--only: unknown scenario '${word}' (${SCENARIOS.join(', ')} or 1..6)`);
    only.add(match);
  }
  if (only.size === 0) SCENARIOS.forEach((s) => only.add(s));
  // --impl holdfast,redlock: measure only these (and the floor), e.g. under --cpu-prof.
  const implArg = value('--impl');
  const implFilter = implArg === undefined ? undefined : new Set(implArg.split(',').map((w) => w.trim()));
  for (const id of implFilter ?? []) {
    if (![...SINGLE_IMPLS, ...QUORUM_IMPLS].some((i) => i.id === id || i.family === id)) throw new Error(`--impl: unknown implementation '${id}'`);
  }
  const full = cfg.mode === 'default' && onlyArg === undefined && rounds === undefined && implArg === undefined;
  return { cfg, only, svg: argv.includes('--svg') || full, implFilter };
}

async function main(): Promise<void> {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`bench: ${errorText(e)} (--help for usage)\n`);
    process.exit(2);
  }
  const { cfg, only, svg, implFilter } = args;
  process.on('unhandledRejection', countUnhandled);
  dedupeWarnings();
  let interrupted = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (interrupted) process.exit(130);
      interrupted = true;
      log(`${sig}: stopping servers`);
      void stopAll().finally(() => process.exit(130));
    });
  }
  log(`mode ${cfg.mode}, ${cfg.rounds} round(s), scenarios: ${[...only].join(', ')}`);
  retryBudgetMs = cfg.retryBudgetMs;

  const results = new Map<string, ScenarioResult>();
  let watchdog: WatchdogResult | undefined;
  let redisVersion = '?';
  const admins: Redis[] = [];
  let failure: unknown;
  try {
    const single = await startServer();
    const masters = only.has('quorum') ? await startMasters(3) : [];
    log(`redis-server on ${[single, ...masters].map((s) => s.port).join(', ')}`);
    const admin = await connect(single.port);
    admins.push(admin);
    const masterAdmins = await Promise.all(masters.map((m) => connect(m.port)));
    admins.push(...masterAdmins);
    redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? '?';
    // npm and tsx are still busy for a moment after starting us.
    await waitForQuiet(cfg.mode === 'quick' ? 1_000 : 5_000);
    const env: Env = {
      cfg,
      impls: SINGLE_IMPLS.filter((i) => i.family === 'raw' || !implFilter || implFilter.has(i.id) || implFilter.has(i.family)),
      quorumImpls: QUORUM_IMPLS.filter((i) => i.family === 'raw' || !implFilter || implFilter.has(i.id) || implFilter.has(i.family)),
      single,
      masters,
      admin,
      masterAdmins,
    };

    if (only.has('uncontended')) {
      results.set('uncontended', await cycleScenario(env, 'uncontended', '1. Uncontended lock+unlock, one key, sequential', env.impls, [single.port], [admin], 1, cfg.seqMs));
    }
    if (only.has('parallel64')) {
      results.set('parallel64', await cycleScenario(env, 'parallel64', '2. 64 keys in parallel (64 concurrent loops, one key each)', env.impls, [single.port], [admin], 64, cfg.parMs));
    }
    if (only.has('workers16')) results.set('workers16', await workersScenario(env));
    if (only.has('procs4')) {
      for (const think of [0, 2]) {
        const r = await processesScenario(env, think);
        results.set(r.id, r);
      }
    }
    if (only.has('quorum')) {
      results.set(
        'quorum',
        await cycleScenario(env, 'quorum', '5. Quorum over 3 masters: uncontended lock+unlock, one key', env.quorumImpls, masters.map((m) => m.port), masterAdmins, 1, cfg.quorumMs),
      );
    }
    if (only.has('watchdog')) {
      log(`watchdog: ${cfg.wdLocks} held locks, then ${cfg.wdCycles.toLocaleString('en-US')} cycles (child process, --expose-gc)`);
      watchdog = await watchdogScenario(env);
    }
  } catch (e) {
    failure = e;
    log(`FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  } finally {
    await Promise.all(admins.map((a) => a.quit().catch(() => a.disconnect())));
    await stopAll().catch((e) => log(`stopAll: ${errorText(e)}`));
    log('servers stopped');
  }

  // ---- report
  const cpus = os.cpus();
  const meta = {
    date: new Date().toISOString(),
    mode: cfg.mode,
    rounds: cfg.rounds,
    host: { platform: `${os.type()} ${os.release()} ${os.arch()}`, cpus: cpus.length, cpuModel: cpus[0]?.model ?? '?', memGB: Math.round(os.totalmem() / 2 ** 30) },
    node: process.version,
    redis: redisVersion,
    leaseMs: LEASE,
    unhandledRejections: unhandledRejections + childCounts.unhandled,
    warnings: { ...Object.fromEntries(warningKinds), childProcesses: childCounts.warnings },
    errors: Object.fromEntries(errorSamples),
    summary: '',
    footnote: '',
  };
  meta.summary = `${meta.date.slice(0, 10)} · ${meta.host.cpus} × ${meta.host.cpuModel} · Node ${meta.node} · redis-server ${redisVersion} · ${cfg.mode} mode, ${cfg.rounds} round(s), implementations alternating per round`;
  meta.footnote = `Contended floor: holdfast's Lua scripts retried every ${POLL_MS} ms. Peers: redlock retryDelay ${PEER_RETRY_MS}±${PEER_RETRY_JITTER} ms, redis-semaphore retryInterval ${PEER_RETRY_MS} ms; lease ${LEASE} ms everywhere.`;

  const lines: string[] = [];
  lines.push(`# holdfast benchmark (${cfg.mode})`, '');
  lines.push(`${meta.date} · ${meta.host.platform} · ${meta.host.cpus} CPUs (${meta.host.cpuModel}) · Node ${meta.node} · redis-server ${redisVersion} (127.0.0.1, started by the bench)`);
  lines.push('');
  lines.push(
    `Rounds: ${cfg.rounds}, implementations alternating within each round. × floor = median over rounds of (implementation / raw floor of the same round); ` +
      `the raw floor is holdfast's own lib/lua scripts called with ioredis evalsha (acquire then release, one connection; under contention retried every ${POLL_MS} ms). ` +
      'RT = commands sent by Node (round trips); Redis cmds include those run inside Lua scripts. Latency percentiles pool all rounds.',
  );
  for (const s of results.values()) {
    lines.push('', `## ${s.title}`, '');
    lines.push(`_${Object.entries(s.params).map(([k, v]) => `${k} ${v}`).join(', ')}_`, '');
    lines.push(scenarioTable(s));
    const foreign = Math.max(...s.summaries.map((x) => x.foreignCoresMax));
    const retried = s.rounds.filter((r) => r.retried).length;
    if (foreign > 0.15 || retried > 0) {
      lines.push(
        '',
        `⚠ Other processes on this machine used up to ${foreign.toFixed(2)} cores during this scenario's kept runs (/proc/stat minus our Node and Redis CPU)` +
          `${retried ? `; ${retried} disturbed run(s) were measured again and the less disturbed attempt kept` : ''}: numbers may be disturbed.`,
      );
    }
  }
  if (watchdog) {
    lines.push('', '## 6. Watchdog: held locks, renewal ticks, heap (holdfast only)', '', watchdogTable(watchdog));
  }
  const targets = evaluateTargets(results, watchdog);
  if (targets.length) {
    lines.push('', '## Targets (holdfast)', '');
    lines.push(mdTable(['target', 'measured', 'verdict'], targets.map((t) => [t.target, t.measured, t.pass === undefined ? '–' : t.pass ? 'PASS' : '**MISS**'])));
  }
  if (meta.unhandledRejections || errorSamples.size) {
    lines.push('', `Unhandled rejections (counted, not fatal; all processes): ${meta.unhandledRejections}. Error kinds in this process: ${errorSamples.size}${errorSamples.size ? ' (see bench-results/latest.json)' : ''}.`);
  }
  if (failure) lines.push('', `**Run failed:** ${errorText(failure)}`);
  process.stdout.write(`${lines.join('\n')}\n`);

  const root = path.join(__dirname, '..');
  fs.mkdirSync(path.join(root, 'bench-results'), { recursive: true });
  const json = { meta, config: cfg, scenarios: [...results.values()], watchdog, targets, failed: failure ? errorText(failure) : undefined };
  fs.writeFileSync(path.join(root, 'bench-results', 'latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  log('wrote bench-results/latest.json');
  if (svg && results.size > 0 && !failure) {
    fs.mkdirSync(path.join(root, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(root, 'docs', 'bench.svg'), renderSvg([...results.values()], meta));
    log('wrote docs/bench.svg');
  } else {
    log(`docs/bench.svg not written (${failure ? 'the run failed' : 'only full default runs write it; --svg forces'})`);
  }
  log(`done in ${((performance.now() - startedAt) / 1000).toFixed(0)} s`);
  // Peers leave timers behind (node-redisson's wait timeouts): exit explicitly.
  process.exitCode = failure ? 1 : 0;
  process.stdout.write('', () => process.exit());
}

// ---------------------------------------------------------------------------

const childMode = process.argv.find((a) => a.startsWith('--child='))?.slice('--child='.length);
if (childMode) {
  process.on('disconnect', () => process.exit(0));
  process.on('unhandledRejection', countUnhandled);
  dedupeWarnings();
  void childLoop();
} else {
  main().catch((e: unknown) => {
    log(`fatal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    void stopAll().finally(() => process.exit(1));
  });
}
