/** A nemesis: injects one kind of fault into a running chaos run and returns it once it is over. */
import type { Fault } from '../faults';
import type { Rng } from '../prng';
import type { ChaosServers } from '../topology';
import type { WorkerSlot } from '../workers';

export interface ChaosRun {
  /** The workers' watchdogTimeout, ms: faults are sized by it. */
  lease: number;
  rng: Rng;
  servers: ChaosServers;
  workers: WorkerSlot[];
  /** Workers also take the semaphore (its slot counts in a Cluster restart). */
  semaphore: boolean;
  /** Mostly the worker that holds the main lock right now (a fault there matters most), else any. */
  target(): Promise<WorkerSlot>;
}

export interface Nemesis {
  /** Resolves when the fault is over: the servers answer again, the worker runs again. */
  inject(run: ChaosRun): Promise<Fault>;
}
