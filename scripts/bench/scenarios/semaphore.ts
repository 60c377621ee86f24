/**
 * Scenario 7 (opt-in: --only semaphore): holdfast's Semaphore against redis-semaphore's
 * Semaphore/MultiSemaphore under contention, in this process. 16 workers on one
 * semaphore of limit 4 over 4 connections: 14 ask for 1 permit, 2 for 3 permits (the
 * "big" requests a stream of small ones may starve); critical section: setImmediate.
 * Reported per implementation, ratios to redis-semaphore in the same round:
 * throughput, p99 wait of all acquisitions and of the big ones, per-worker spread.
 *
 * redis-semaphore polls every `retryInterval` (10 ms, its default) and grants whoever
 * polls when permits are free; holdfast queues waiters in Redis and wakes them by pub/sub.
 * The semaphore hand-off floor (impls/semaphore-handoff.ts) says, in the same run, how fast
 * any semaphore that keeps arrival order can go.
 */
import type Redis from 'ioredis';
import { MultiSemaphore, Semaphore as PeerSemaphore } from 'redis-semaphore';
import type { LockClient } from '../../../lib';
import { lockClientClass } from '../impls/holdfast-module';
import { LEASE, MAX_WAIT_MS, PEER_RETRY_MS } from '../config';
import { measured } from '../disturbance';
import type { Env } from '../env';
import { connect, quitAll } from '../impls/connect';
import type { ImplDef, Worker } from '../impls/types';
import { log, noteError } from '../log';
import { append, median, percentiles } from '../stats';
import { summarize, type RoundRecord, type ScenarioResult } from '../results';
import { Meter } from '../meter';
import { semaphoreHandoff } from '../impls/semaphore-handoff';

const WORKERS = 16;
const LIMIT = 4;
const BIG = 3;
/** Workers 0 and 8 ask for BIG permits, the others for 1. */
const permitsOf = (w: number) => (w % 8 === 0 ? BIG : 1);

type Open = (name: string, connections: Redis[]) => { workers: Worker[]; close(): Promise<void> };

/** What this scenario uses of a holdfast version (the working tree's, or --baseline's). */
type SemaphoreClientClass = new (connection: Redis, options: { watchdogTimeout: number }) => Pick<LockClient, 'getSemaphore' | 'on' | 'close'>;

const holdfastOf = (Client: SemaphoreClientClass): Open => (name, conns) => {
  const clients = conns.map((c) => new Client(c, { watchdogTimeout: LEASE }));
  for (const c of clients) c.on('error', (e) => noteError('holdfast semaphore error', e));
  const workers = Array.from({ length: WORKERS }, (_, w): Worker => {
    const sem = clients[w % clients.length]!.getSemaphore(name, LIMIT);
    let permit: { release(): Promise<void> } | undefined;
    return {
      acquire: async () => void (permit = await sem.acquire({ permits: permitsOf(w), waitTime: MAX_WAIT_MS })),
      release: () => permit!.release(),
    };
  });
  return { workers, close: async () => void (await Promise.all(clients.map((c) => c.close()))) };
};

const peer: Open = (name, conns) => {
  const options = { lockTimeout: LEASE, acquireTimeout: MAX_WAIT_MS, retryInterval: PEER_RETRY_MS, onLockLost: (e: Error) => noteError('redis-semaphore lost', e) };
  const workers = Array.from({ length: WORKERS }, (_, w): Worker => {
    const conn = conns[w % conns.length]!;
    const sem = permitsOf(w) === 1 ? new PeerSemaphore(conn, name, LIMIT, options) : new MultiSemaphore(conn, name, LIMIT, permitsOf(w), options);
    return { acquire: () => sem.acquire(), release: () => sem.release() };
  });
  return { workers, close: async () => undefined };
};

/**
 * The implementations, with --baseline's holdfast as a third: each holdfast as built
 * (loadHoldfast: dist/cjs, or lib/ for both with BENCH_HOLDFAST_FROM=lib), so the two
 * compare alike and as the other scenarios measure holdfast.
 */
function implsOf(baseline: Env['baseline']): (ImplDef & { run: Open })[] {
  const impls: (ImplDef & { run: Open })[] = [
    { id: 'redis-semaphore-sem', label: 'redis-semaphore Semaphore', family: 'redis-semaphore', open: unused, run: peer },
    { id: 'holdfast-sem', label: 'holdfast Semaphore', family: 'holdfast', open: unused, run: holdfastOf(lockClientClass()) },
    { id: 'semaphore-handoff', label: 'semaphore hand-off floor (arrival order, a release grants the head)', family: 'contract-floor', open: unused, run: (name, conns) => semaphoreHandoff(name, conns, WORKERS, LIMIT, LEASE, permitsOf) },
  ];
  if (baseline) {
    const Client = lockClientClass(baseline.dir) as unknown as SemaphoreClientClass;
    impls.push({ id: `holdfast-sem@${baseline.ref}`, label: `holdfast@${baseline.ref} Semaphore`, family: 'holdfast-baseline', twinOf: 'holdfast-sem', open: unused, run: holdfastOf(Client) });
  }
  return impls;
}

function unused(): never {
  throw new Error('the semaphore scenario opens its implementations itself');
}

export async function semaphore(env: Env): Promise<ScenarioResult> {
  const { cfg } = env;
  const IMPLS = implsOf(env.baseline);
  const records: RoundRecord[] = [];
  const samples = new Map<string, number[]>(IMPLS.map((i) => [i.id, []]));
  const bigP99: Record<string, number[]> = {};
  for (let round = 1; round <= cfg.rounds; round++) {
    // Alternate who goes first, as the other scenarios do.
    for (const impl of round % 2 ? IMPLS : [...IMPLS].reverse()) {
      let attempt = 0;
      const { rec, samples: got } = await measured(`semaphore round ${round} ${impl.id}`, async () => {
        const conns = await Promise.all(Array.from({ length: 4 }, () => connect(env.single.port)));
        const { workers, close } = impl.run(`semaphore:${round}:${impl.id}:${++attempt}`, conns);
        const r = await contend(workers, cfg.warmMs, cfg.contMs, cfg.graceMs, new Meter([env.admin]));
        await close();
        await quitAll(conns);
        const big = percentiles(r.bigWaits).p99;
        (bigP99[impl.id] ??= []).push(big);
        const rec: RoundRecord = { impl: impl.id, round, opsPerSec: (r.sections / cfg.contMs) * 1000, ops: r.sections, errors: r.errors, stuck: r.stuck, cost: r.cost, costOps: Math.max(1, r.sections), perWorker: r.perWorker, overlaps: r.overHeld };
        log(`semaphore round ${round}/${cfg.rounds} ${impl.id.padEnd(20)} ${Math.round(rec.opsPerSec).toString().padStart(6)} CS/s, p99 wait of ${BIG}-permit requests ${big.toFixed(1)} ms, per worker ${Math.min(...r.perWorker)}-${Math.max(...r.perWorker)}${r.errors ? `, ${r.errors} errors` : ''}${r.overHeld ? `, ${r.overHeld} OVER LIMIT` : ''}`);
        return { rec, samples: r.waits };
      });
      records.push(rec);
      append(samples.get(impl.id)!, got);
    }
  }
  return {
    id: 'semaphore',
    title: `7. semaphore: ${WORKERS} workers, limit ${LIMIT}, 2 of them asking ${BIG} permits (critical section: setImmediate)`,
    kind: 'contended',
    latency: 'wait',
    floor: 'redis-semaphore-sem',
    params: { workers: WORKERS, limit: LIMIT, bigPermits: BIG, bigWorkers: 2, connections: 4, durationMs: cfg.contMs, rounds: cfg.rounds, peerRetryMs: PEER_RETRY_MS, leaseMs: LEASE, bigP99MsMedian: Object.entries(bigP99).map(([id, v]) => `${id} ${median(v).toFixed(1)}`).join(', ') },
    summaries: summarize(IMPLS, 'redis-semaphore-sem', records, samples),
    rounds: records,
  };
}

interface Contention {
  sections: number;
  perWorker: number[];
  waits: number[];
  bigWaits: number[];
  errors: number;
  stuck: number;
  /** Moments more permits were held than the limit (must be 0). */
  overHeld: number;
  cost: RoundRecord['cost'];
}

/** Every worker acquires, yields once, releases, for warm + measured ms; waits counted in the measured part only. */
async function contend(workers: Worker[], warmMs: number, durationMs: number, graceMs: number, meter: Meter): Promise<Contention> {
  const perWorker = workers.map(() => 0);
  const waits: number[] = [];
  const bigWaits: number[] = [];
  let held = 0;
  let overHeld = 0;
  let errors = 0;
  const t0 = performance.now();
  const measureFrom = t0 + warmMs;
  const until = measureFrom + durationMs;
  const loops = workers.map(async (worker, w) => {
    while (performance.now() < until) {
      const asked = performance.now();
      try {
        await worker.acquire();
      } catch (e) {
        errors += 1;
        noteError('semaphore acquire', e);
        continue;
      }
      held += permitsOf(w);
      if (held > LIMIT) overHeld += 1;
      const granted = performance.now();
      if (granted >= measureFrom && granted < until) {
        perWorker[w] += 1;
        waits.push(granted - asked);
        if (permitsOf(w) > 1) bigWaits.push(granted - asked);
      }
      await new Promise((resolve) => setImmediate(resolve));
      held -= permitsOf(w);
      await worker.release().catch((e: unknown) => {
        errors += 1;
        noteError('semaphore release', e);
      });
    }
  });
  await new Promise((resolve) => setTimeout(resolve, warmMs));
  await meter.start();
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  const cost = await meter.stop();
  const settled = await Promise.race([Promise.all(loops).then(() => 'done'), new Promise((resolve) => setTimeout(() => resolve('stuck'), graceMs + MAX_WAIT_MS))]);
  return { sections: perWorker.reduce((a, b) => a + b, 0), perWorker, waits, bigWaits, errors, stuck: settled === 'done' ? 0 : 1, overHeld, cost };
}
