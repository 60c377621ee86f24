/** What a chaos run is asked to do (run.ts), and what it returns. */
import type { Fault, FaultKind } from './faults';
import type { HeapTrend, Report } from './history';
import type { PermitReport } from './permits';
import type { Violation } from './records';
import type { RegisterReport } from './register-check';
import type { WaitReport } from './waits-check';

/**
 * 'single': one master; 'quorum': 3 independent masters (a restart empties one of them
 * at a time); 'cluster': a 3-master Redis Cluster (a restart empties one node: the locks
 * it serves), with `replicas` one replica per master (failovers); 'sentinel': a
 * primary, two replicas, three sentinels (failovers).
 */
export type Topology = 'single' | 'quorum' | 'cluster' | 'sentinel';

export interface ChaosOptions {
  durationMs?: number;
  mode?: Topology;
  /** Redis persists every write before it answers (appendonly, appendfsync always): its restarts keep the data (single and quorum). */
  aof?: boolean;
  /** The masters' wall clocks can be stepped (clockStep faults; one master or quorum): a mode docs/safety.md calls unsafe. */
  clock?: boolean;
  /** Cluster mode: one replica per master, and failovers (a master killed, or CLUSTER FAILOVER on its replica). */
  replicas?: boolean;
  /** Sentinel mode: the workers' LockClient uses syncReplicas (CHAOS_SYNC_REPLICAS). */
  syncReplicas?: boolean;
  workers?: number;
  tasks?: number;
  watchdogTimeout?: number;
  /** Pause between two faults, ms. */
  faultGap?: [number, number];
  /** Kinds of fault to inject (default: all of the mode's). */
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
  /** Seeds the fault schedule and every worker's choices (prng.ts); default: a fresh one, reported. */
  seed?: number;
}

export interface ChaosResult {
  seed: number;
  report: Report;
  register: RegisterReport;
  waits: WaitReport;
  permits: PermitReport | undefined;
  faults: Fault[];
  faultsByKind: Partial<Record<FaultKind, number>>;
  violations: Violation[];
  /** Lock keys and channels left after the workers closed. */
  leftovers: number;
  summary: string;
  /** Client connections that CLIENT LIST showed on the servers (all must come through a worker's proxy). */
  clientsChecked: { clients: number; shardSubscribers: number };
  /** Heap after GC of the longest-lived worker, when it lived long enough for two samples. */
  heap: HeapTrend | undefined;
  logDir: string;
}

export const LOCKS = ['main', 'aux-1', 'aux-2'];
/** The semaphore of --semaphore runs. */
export const SEMAPHORE = { name: 'sem', limit: 5 };
/** The name of the orchestrator's own connections, which CLIENT LIST may show unproxied. */
export const ADMIN_NAME = 'chaos-admin';
/**
 * The syncReplicas the workers use with --sync-replicas: every replica (the topology has
 * two; docs/safety.md: with fewer, a spurious failover loses grants), WAIT under the
 * lease's call bound.
 */
export const CHAOS_SYNC_REPLICAS = { min: 2, timeout: 200 } as const;
