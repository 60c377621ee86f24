/** The measured loops: lock+unlock cycles on own keys, and contended loops on one key. */
import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises';
import { settleWithin } from './async';
import { MAX_OPS_PER_LOOP } from './config';
import type { Runner } from './impls/types';
import { noteError } from './log';
import { sum } from './stats';

/** `names.length` concurrent loops of lock+unlock, one name each, for durationMs. */
export async function cycleLoops(runner: Runner, names: string[], durationMs: number, graceMs: number, samples: number[] | null) {
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

export interface ContendedRun {
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

/**
 * `workers` loops on one name: lock, setImmediate, unlock, think; for durationMs. Worker
 * i uses runners[i % runners.length]: one shared client, or one client each.
 */
export async function contendedLoops(runners: Runner[], name: string, workers: number, durationMs: number, thinkMs: number, graceMs: number): Promise<ContendedRun> {
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
    const w = runners[i % runners.length].worker(name);
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
