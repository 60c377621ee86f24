/** Every nemesis, by the kind of fault it injects (faults.ts). */
import type { FaultKind } from '../faults';
import { clockStep } from './clock-step';
import { drop } from './drop';
import { failover } from './failover';
import { kill } from './kill';
import { latency } from './latency';
import { loopStall } from './loop-stall';
import { migrate } from './migrate';
import type { Nemesis } from './nemesis';
import { pause } from './pause';
import { pubsubKill } from './pubsub-kill';
import { replicaLag } from './replica-lag';
import { aofRestart, restart } from './restart';
import { scriptFlush } from './script-flush';
import { stall } from './stall';

export type { ChaosRun, Nemesis } from './nemesis';

export const NEMESES: Readonly<Record<FaultKind, Nemesis>> = { kill, pause, restart, aofRestart, scriptFlush, stall, drop, pubsubKill, latency, loopStall, failover, replicaLag, migrate, clockStep };
