/**
 * Messages between the orchestrator and its forked children, and the type guards each
 * side applies on receipt (a malformed message is an error, never a silent NaN).
 *
 * Each request carries an id; the child answers every request exactly once, in order,
 * with the same id, and its current tallies of unhandled rejections and warnings.
 */
import type { ContendedRun } from './loops';
import type { Cost } from './meter';
import type { WatchdogResult } from './results';

export type Request =
  /** procs4: open an implementation and one worker, warm up on a key of this process. */
  | { type: 'open'; id: number; impl: string; ports: number[]; name: string; warmMs: number }
  /** procs4: run the opened worker from startAtUs (hrUs clock) for durationMs. */
  | { type: 'go'; id: number; startAtUs: number; durationMs: number; thinkMs: number; graceMs: number }
  /** procs4: close what open opened. */
  | { type: 'close'; id: number }
  /** workers16 / clients16: the whole measured run, in the child; `clients`: connections+clients opened (1 shared, or one per worker). */
  | { type: 'contended'; id: number; impl: string; port: number; name: string; workers: number; clients: number; durationMs: number; graceMs: number; warmMs: number; contWarmMs: number }
  /** watchdog: the whole scenario for one holdfast version (`impl` is a HoldfastVariant id). */
  | { type: 'watchdog'; id: number; impl: string; port: number; locks: number; periods: number; cycles: number };

export type RequestType = Request['type'];
export type RequestOf<K extends RequestType> = Extract<Request, { type: K }>;
/** A request before Child.request numbers it. */
export type Unnumbered<K extends RequestType> = Omit<RequestOf<K>, 'id'>;

/** One process's part of a procs4 run; times in hrUs microseconds. */
export interface ProcRun {
  acq: number[];
  rel: number[];
  waits: number[];
  errors: number;
  stuck: number;
  cpuUs: number;
  sent: number;
}

export interface ReplyBodies {
  open: Record<string, never>;
  go: ProcRun;
  close: Record<string, never>;
  contended: { run: ContendedRun; cost: Cost };
  watchdog: { result: WatchdogResult };
}

interface ReplyCounts {
  id: number;
  /** The child's unhandled rejections and process warnings so far. */
  unhandled: number;
  warnings: number;
}

export type Reply = (ReplyCounts & { ok: true; body: unknown }) | (ReplyCounts & { ok: false; error: string });

// ---------------------------------------------------------------------------
// Guards

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasNumbers(o: Obj, keys: string[]): boolean {
  return keys.every((k) => typeof o[k] === 'number');
}

function hasNumberArrays(o: Obj, keys: string[]): boolean {
  return keys.every((k) => {
    const v = o[k];
    return Array.isArray(v) && v.every((x) => typeof x === 'number');
  });
}

const REQUEST_FIELDS: { [K in RequestType]: { numbers: string[]; strings: string[]; numberArrays: string[] } } = {
  open: { numbers: ['warmMs'], strings: ['impl', 'name'], numberArrays: ['ports'] },
  go: { numbers: ['startAtUs', 'durationMs', 'thinkMs', 'graceMs'], strings: [], numberArrays: [] },
  close: { numbers: [], strings: [], numberArrays: [] },
  contended: { numbers: ['port', 'workers', 'clients', 'durationMs', 'graceMs', 'warmMs', 'contWarmMs'], strings: ['impl', 'name'], numberArrays: [] },
  watchdog: { numbers: ['port', 'locks', 'periods', 'cycles'], strings: ['impl'], numberArrays: [] },
};

export function isRequest(m: unknown): m is Request {
  if (!isObj(m) || typeof m.id !== 'number' || typeof m.type !== 'string' || !Object.hasOwn(REQUEST_FIELDS, m.type)) return false;
  const fields = REQUEST_FIELDS[m.type as RequestType];
  return hasNumbers(m, fields.numbers) && fields.strings.every((k) => typeof m[k] === 'string') && hasNumberArrays(m, fields.numberArrays);
}

export function isReply(m: unknown): m is Reply {
  if (!isObj(m) || !hasNumbers(m, ['id', 'unhandled', 'warnings'])) return false;
  return m.ok === true ? 'body' in m : m.ok === false && typeof m.error === 'string';
}

function isCost(v: unknown): v is Cost {
  return isObj(v) && hasNumbers(v, ['ms', 'nodeCpuUs', 'sent', 'redisCmds', 'evalsha', 'redisCpuUs', 'machineBusyUs']) && isObj(v.cmdMix);
}

function isContendedRun(v: unknown): v is ContendedRun {
  return isObj(v) && hasNumbers(v, ['cs', 'csAll', 'handoffs', 'overlaps', 'errors', 'stuck']) && hasNumberArrays(v, ['perWorker', 'waits']);
}

function isWatchdogResult(v: unknown): v is WatchdogResult {
  return (
    isObj(v) &&
    hasNumbers(v, ['locks', 'ticks', 'renewals', 'evalsha', 'rtPerTick', 'rtPer100Renewals', 'heapPerHandleBytes', 'heapPerHeldLockBytes', 'heapGrowthBytes', 'cycles']) &&
    Array.isArray(v.heapSamples) &&
    v.heapSamples.every((s) => isObj(s) && hasNumbers(s, ['cycles', 'heapUsed']))
  );
}

const isEmpty = (v: unknown): v is Record<string, never> => isObj(v);

/** Per request type: is this the body its reply must carry? */
export const isReplyBody: { [K in RequestType]: (body: unknown) => body is ReplyBodies[K] } = {
  open: isEmpty,
  close: isEmpty,
  go: (v): v is ProcRun => isObj(v) && hasNumbers(v, ['errors', 'stuck', 'cpuUs', 'sent']) && hasNumberArrays(v, ['acq', 'rel', 'waits']),
  contended: (v): v is ReplyBodies['contended'] => isObj(v) && isContendedRun(v.run) && isCost(v.cost),
  watchdog: (v): v is ReplyBodies['watchdog'] => isObj(v) && isWatchdogResult(v.result),
};
