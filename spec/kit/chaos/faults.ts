/**
 * The faults a chaos run injects (spec/kit/chaos/nemeses, one module each) and what
 * each may excuse or explain in the history (spec/kit/chaos/history.ts).
 *
 * Excuses (two holders at once allowed): only 'restart' (an empty restart: the lock's
 * data is gone), a Cluster 'failover' whose old master was killed or overruled (FORCE: what it had not
 * replicated is gone), a 'pause' of the holder longer than the lease, and a holder whose
 * process ran nothing past its deadline (its loop gap: 'loopStall' shows as one).
 * Every other fault excuses nothing: a lock must keep mutual exclusion through it.
 */

/**
 * kill: SIGKILL of a worker (respawned). pause: SIGSTOP/SIGCONT of a worker for longer
 * than the lease. restart: SIGKILL of Redis (a master, a Cluster node) and a start with
 * EMPTY data. aofRestart: the same with appendonly/appendfsync always, so every
 * acknowledged write survives: it excuses nothing. scriptFlush: SCRIPT FLUSH everywhere.
 * stall: a worker's proxies blackhole for longer than the lease, then reset. drop: replies
 * lost, then the connections reset (commands resent). pubsubKill: CLIENT KILL TYPE pubsub
 * (every subscriber connection, sharded ones too, dropped with their messages in flight).
 * latency: a worker's proxies delay every chunk by a good part of the lease for a while.
 * loopStall: a worker blocks its own event loop (busy wait) for longer than a third of
 * the lease. failover (Sentinel): the primary SIGKILLed, a replica promoted, the old one
 * back as a replica; (Cluster with replicas): a master serving a lock SIGKILLed until
 * its replica takes over, or its replica told CLUSTER FAILOVER (FORCE or not), the old master back as
 * a replica either way. replicaLag (Sentinel): every replica SIGSTOPped for a while (WAIT
 * gets no acknowledgement: syncReplicas refuses grants and renewals meanwhile).
 * migrate (Cluster): a name's slot moved to another node while in use (ASK, TRYAGAIN,
 * the slot's sharded subscribers dropped). clockStep: a server's wall clock stepped
 * forward, then back (leases end early: unsafe, on purpose).
 */
export type FaultKind =
  | 'kill'
  | 'pause'
  | 'restart'
  | 'aofRestart'
  | 'scriptFlush'
  | 'stall'
  | 'drop'
  | 'pubsubKill'
  | 'latency'
  | 'loopStall'
  | 'failover'
  | 'replicaLag'
  | 'migrate'
  | 'clockStep';

export const ALL_FAULT_KINDS: readonly FaultKind[] = ['kill', 'pause', 'restart', 'aofRestart', 'scriptFlush', 'stall', 'drop', 'pubsubKill', 'latency', 'loopStall', 'failover', 'replicaLag', 'migrate', 'clockStep'];
/** The faults of the single, quorum and Cluster modes without persistence. */
export const FAULT_KINDS: readonly FaultKind[] = ['kill', 'pause', 'restart', 'scriptFlush', 'stall', 'drop', 'pubsubKill', 'latency', 'loopStall'];
/** Cluster mode's: those and slot migrations. */
export const CLUSTER_FAULT_KINDS: readonly FaultKind[] = [...FAULT_KINDS, 'migrate'];
/** Cluster mode with a replica per master: those and failovers. */
export const CLUSTER_REPLICA_FAULT_KINDS: readonly FaultKind[] = [...CLUSTER_FAULT_KINDS, 'failover'];
/** The clock mode's (one master with a steppable clock): every fault of one master, and clock steps. */
export const CLOCK_FAULT_KINDS: readonly FaultKind[] = [...FAULT_KINDS, 'clockStep'];
/** With AOF (appendfsync always): restarts keep the data. */
export const AOF_FAULT_KINDS: readonly FaultKind[] = FAULT_KINDS.map((k) => (k === 'restart' ? 'aofRestart' : k));
/** Sentinel mode's: the workers reach Redis through Sentinel, not through proxies (no stall, drop, latency). */
export const SENTINEL_FAULT_KINDS: readonly FaultKind[] = ['failover', 'replicaLag', 'kill', 'pause', 'scriptFlush', 'pubsubKill', 'loopStall'];

export interface Fault {
  kind: FaultKind;
  /** Worker slot for kill, pause, stall, drop, latency, loopStall. */
  worker?: number;
  /** Process hit by kill, pause or loopStall (its holds are cut at a kill). */
  pid?: number;
  /** Quorum and Cluster mode: the master (node) restarted. */
  master?: number;
  /**
   * Cluster mode, restart: the locks whose slots the restarted node serves, the only
   * ones whose data it lost. Absent: every lock (a single Redis, or quorum masters).
   * migrate: the locks whose slot moved (from node `master`). failover (Cluster): the
   * locks the failed-over master served.
   */
  locks?: string[];
  /** Cluster failover: the master was SIGKILLed (its replica promoted on its own), its replica told CLUSTER FAILOVER FORCE ('forced'), or CLUSTER FAILOVER ('manual', nothing lost). */
  how?: 'killed' | 'forced' | 'manual';
  /** When the fault began (for a restart: the moment the old server was dead). */
  begin: number;
  /** When it ended (resume, restart done, proxy forwarding again). */
  end: number;
}

/**
 * The fault could have lost this lock's data: an empty restart of the Cluster node
 * serving its slot, or of a master holding every lock; or a Cluster failover after the
 * node serving its slot was killed, or forced (asynchronous replication: what the
 * replica had not received is gone). A planned CLUSTER FAILOVER loses nothing, and a Sentinel failover
 * is judged by its own mode (with syncReplicas it must lose nothing; without, its
 * overlaps are shown as violations of a mode docs/safety.md calls unsafe).
 */
export function losesDataOf(f: Fault, lock: string): boolean {
  if (f.kind === 'failover') return (f.how === 'killed' || f.how === 'forced') && f.locks !== undefined && f.locks.includes(lock);
  return f.kind === 'restart' && (f.locks === undefined || f.locks.includes(lock));
}

/** Faults that hit every holder of a lock (Redis itself), so may explain a loss report; none excuses an overlap but an empty restart. */
const SERVER_WIDE: ReadonlySet<FaultKind> = new Set(['aofRestart', 'scriptFlush', 'failover', 'replicaLag', 'migrate', 'clockStep']);
/** Faults that hit one worker: they explain only that worker's losses. */
const PER_WORKER: ReadonlySet<FaultKind> = new Set(['stall', 'drop', 'latency']);

/** The fault can explain why a hold of `lock` by this worker/process was reported lost. */
export function explainsLossOf(f: Fault, h: { lock: string; worker: number; pid: number }): boolean {
  if (losesDataOf(f, h.lock) || SERVER_WIDE.has(f.kind)) return true;
  if (f.kind === 'pause' || f.kind === 'loopStall') return f.pid === h.pid;
  return PER_WORKER.has(f.kind) && f.worker === h.worker;
}
