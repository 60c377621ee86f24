/**
 * What the chaos workers log (one JSONL line per event: worker.ts, sections.ts) and the
 * holds the checkers see, joined from those lines. Pure.
 */
import type { Fault } from './faults';

/**
 * One line of a worker's JSONL log. `id` joins the lines of one hold. An acq with `with`
 * is one name's section of a multi-lock (the other names it held together); it is
 * checked as any section of its name.
 */
export type LogRecord =
  /** permits: a semaphore's section (its `lock` is the semaphore's name), checked by spec/kit/chaos/permits.ts; side: a read-write lock's. */
  | { type: 'acq'; id: string; worker: number; pid: number; task: number; lock: string; token: number; start: number; permits?: number; side?: 'read' | 'write'; with?: string[]; lease?: number }
  | { type: 'w'; id: string; at: number }
  /** A reader acted in its section (it writes nothing to the fenced store). */
  | { type: 'act'; id: string; at: number }
  | { type: 'lost'; id: string; at: number; reason?: string }
  | { type: 'end'; id: string; at: number }
  | { type: 'rel'; id: string; at: number; outcome: Outcome; error?: string }
  /** The worker's watchdog renewed a lock none of its sections held (a hold outlived its release). */
  | { type: 'ghost'; lock: string; owner: string; at: number }
  /** The worker's heap after a forced GC, sampled every few seconds. */
  | { type: 'mem'; at: number; heap: number }
  /** The worker's event loop ran nothing from `from` to `to` (see LoopGap). */
  | { type: 'gap'; pid: number; from: number; to: number }
  /** A write to the fenced register (register.ts): sent, its reply at `at`, accepted or fenced off. */
  | { type: 'reg'; id: string; sent: number; at: number; ok: boolean }
  /**
   * How one wait ended (`start`: the call; `at`: fn began or the call rejected): held, or
   * one of the failures the contract allows (timeout: LockTimeoutError; unavailable:
   * LockUnavailableError), or 'other', which it does not.
   */
  | { type: 'wait'; worker: number; pid: number; kind: WaitKind; lock: string; start: number; at: number; budget: number; bound: number; outcome: WaitOutcome; error?: string };

export type WaitKind = 'lock' | 'fair' | 'read' | 'write' | 'semaphore' | 'multi';
export type WaitOutcome = 'held' | 'timeout' | 'unavailable' | 'other';

/**
 * A stretch in which a worker process ran nothing: its 10 ms sampler timer fired that
 * late. A SIGSTOP shows as one; so does a machine too loaded to schedule the process.
 * A starved holder can no more report a loss on time than a paused one.
 */
export interface LoopGap {
  pid: number;
  from: number;
  to: number;
}

export function loopGaps(records: readonly LogRecord[]): LoopGap[] {
  return records.flatMap((r) => (r.type === 'gap' ? [{ pid: r.pid, from: r.from, to: r.to }] : []));
}

/** released: run() resolved; lost: it rejected with LockLostError; error: any other rejection. */
export type Outcome = 'released' | 'lost' | 'error';

/** One critical section, as the checker sees it. */
export interface Hold {
  id: string;
  worker: number;
  pid: number;
  lock: string;
  /** A read-write lock's side; absent: a lock (exclusive). */
  side?: 'read' | 'write';
  token: number;
  /** A semaphore's section: the permits it held (checked by spec/kit/chaos/permits.ts, not as a lock). */
  permits?: number;
  /** A multi-lock's section of this name: the other names it held together. */
  with?: string[];
  /** A fixed lease (ms) the hold was taken with; absent: the watchdog renewed it (CheckOptions.lease). */
  lease?: number;
  start: number;
  /** Last moment the holder acted in it; for a killed process, the kill. Absent: never ended. */
  end?: number;
  lostAt?: number;
  lostReason?: string;
  outcome?: Outcome;
  /** Wall-clock times of the holder's writes to the fenced store. */
  writes: number[];
  /** Its writes to the fenced register, in the order sent. */
  registerWrites?: { sent: number; at: number; ok: boolean }[];
  /** Its process was SIGKILLed before it ended. */
  killed?: boolean;
}

/**
 * 'proxy': a worker's connection to Redis bypassed its proxy (a stall would then not cut it off).
 * 'register': the fenced register accepted a holder's write after a successor's (register-check.ts).
 * 'wait': a wait ended in a way the contract does not allow, or a writer starved (waits-check.ts).
 */
export type ViolationKind = 'overlap' | 'token' | 'dangling' | 'fencing' | 'pausedUnaware' | 'leak' | 'exit' | 'worker' | 'proxy' | 'ghost' | 'register' | 'wait';

export interface Violation {
  kind: ViolationKind;
  lock?: string;
  message: string;
}

/** Every renewal of a lock none of the worker's sections held: a hold that outlived its release. */
export function ghostViolations(records: readonly LogRecord[]): Violation[] {
  return records.flatMap((r) =>
    r.type === 'ghost' ? [{ kind: 'ghost' as const, lock: r.lock, message: `at ${r.at} the watchdog renewed ${r.owner}'s hold of ${r.lock}, which no section held any more (released, yet still holding)` }] : [],
  );
}

export interface HeapTrend {
  /** Seconds between the first and last sample used. */
  spanS: number;
  /** Heap after GC, MB: the first sample past warm-up (a fifth of the span), the last, the largest from then on. */
  firstMB: number;
  lastMB: number;
  maxMB: number;
}

/** The heap of the longest-lived worker process over its life (one log file per process). */
export function heapTrend(perProcess: readonly (readonly LogRecord[])[]): HeapTrend | undefined {
  let best: { at: number; heap: number }[] = [];
  for (const records of perProcess) {
    const samples = records.flatMap((r) => (r.type === 'mem' ? [{ at: r.at, heap: r.heap }] : []));
    if (samples.length > 1 && samples[samples.length - 1]!.at - samples[0]!.at > (best.length > 1 ? best[best.length - 1]!.at - best[0]!.at : 0)) best = samples;
  }
  if (best.length < 2) return undefined;
  const t0 = best[0]!.at;
  const warm = best.find((s) => s.at - t0 >= (best[best.length - 1]!.at - t0) / 5) ?? best[0]!;
  const last = best[best.length - 1]!;
  const mb = (b: number) => Math.round((b / 1_048_576) * 10) / 10;
  return { spanS: Math.round((last.at - warm.at) / 1_000), firstMB: mb(warm.heap), lastMB: mb(last.heap), maxMB: mb(Math.max(...best.filter((s) => s.at >= warm.at).map((s) => s.heap))) };
}

/** Joins log records into holds; holds of killed processes are cut at the kill. */
export function buildHolds(records: readonly LogRecord[], faults: readonly Fault[]): Hold[] {
  const holds = new Map<string, Hold>();
  const pending: LogRecord[] = [];
  for (const r of records) {
    if (r.type === 'acq') {
      holds.set(r.id, { id: r.id, worker: r.worker, pid: r.pid, lock: r.lock, ...(r.side ? { side: r.side } : {}), token: r.token, start: r.start, writes: [], registerWrites: [], ...(r.permits === undefined ? {} : { permits: r.permits }), ...(r.with ? { with: r.with } : {}), ...(r.lease === undefined ? {} : { lease: r.lease }) });
    } else pending.push(r);
  }
  for (const r of pending) {
    if (r.type === 'ghost' || r.type === 'mem' || r.type === 'gap' || r.type === 'wait') continue; // see ghostViolations(), heapTrend(), loopGaps(), checkWaits()
    const h = holds.get(r.id);
    if (!h) continue; // the acq line was the one in flight when its process was killed
    switch (r.type) {
      case 'w':
        h.writes.push(r.at);
        break;
      case 'act':
        break;
      case 'reg':
        h.registerWrites!.push({ sent: r.sent, at: r.at, ok: r.ok });
        break;
      case 'lost':
        if (h.lostAt === undefined || r.at < h.lostAt) {
          h.lostAt = r.at;
          h.lostReason = r.reason;
        }
        break;
      case 'end':
        h.end = r.at;
        break;
      case 'rel':
        h.outcome = r.outcome;
        if (h.end === undefined) h.end = r.at;
        break;
    }
  }
  const kills = faults.filter((f) => f.kind === 'kill' && f.pid !== undefined);
  for (const h of holds.values()) {
    h.writes.sort((a, b) => a - b);
    h.registerWrites?.sort((a, b) => a.sent - b.sent);
    if (h.outcome !== undefined) continue;
    const kill = kills.find((k) => k.pid === h.pid && k.begin >= h.start - 5);
    if (kill) {
      h.killed = true;
      h.end = Math.min(h.end ?? kill.begin, kill.begin);
    }
  }
  return [...holds.values()];
}

