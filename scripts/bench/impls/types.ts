/** What a scenario needs from an implementation: workers that acquire and release. */

/** One lock user: acquire() then release(), repeatedly, never concurrently with itself. */
export interface Worker {
  acquire(): Promise<unknown>;
  release(): Promise<unknown>;
}

/** An implementation opened on some servers: its own connections, any number of workers. */
export interface Runner {
  worker(name: string): Worker;
  close(): Promise<void>;
}

/** Series in tables and the chart; the baseline families are holdfast at another git ref. */
export type Family = 'raw' | 'contract-floor' | 'holdfast' | 'holdfast-node-redis' | 'holdfast-fair' | 'redlock' | 'redis-semaphore' | 'node-redisson' | 'holdfast-baseline' | 'holdfast-fair-baseline';

/** Families of a run without --baseline, in chart order. */
export const FAMILIES: Family[] = ['raw', 'holdfast', 'holdfast-node-redis', 'holdfast-fair', 'redlock', 'redis-semaphore', 'node-redisson'];
export const BASELINE_FAMILIES: Family[] = ['holdfast-baseline', 'holdfast-fair-baseline'];

export interface ImplDef {
  id: string;
  label: string;
  family: Family;
  /** For a baseline implementation: the id of its working-tree twin (selected together). */
  twinOf?: string;
  /** false: its connections are not ioredis, so the command counter (counters.ts) does not see its round trips. */
  countsCommands?: false;
  open(ports: number[]): Promise<Runner>;
}

/** holdfast checked out at another git ref (a temporary worktree), for --baseline. */
export interface BaselineCheckout {
  /** As given on the command line, e.g. HEAD~1 or main. */
  ref: string;
  /** The commit it resolved to when the worktree was made. */
  commit: string;
  /** The worktree's root; its build (dist/cjs) is loaded, or lib/index.ts with BENCH_HOLDFAST_FROM=lib. */
  dir: string;
}
