/**
 * Scenarios 3 and 4: 16 workers on one key in one process, ~0 ms critical section,
 * sharing one client (workers16) or each with its own client and connection
 * (clients16: contention between clients, as between processes, without the
 * processes), measured in a child (workers16-child.ts). Each round runs in a fresh child process
 * (implementations in turn, as everywhere): a peer that leaves timers behind
 * (node-redisson's wait timeouts fire up to a lease later) cannot disturb the next
 * round's measurements.
 */
import { Child } from '../children';
import { LEASE, PEER_RETRY_MS, POLL_MS } from '../config';
import { foreignNote, measured } from '../disturbance';
import type { Env } from '../env';
import { CONTRACT_FLOOR } from '../impls/contract-floor';
import { CONTRACT_HANDOFF } from '../impls/contract-handoff';
import { inRoundOrder } from '../impls/registry';
import { log } from '../log';
import { append } from '../stats';
import { summarize, type RoundRecord, type ScenarioResult } from '../results';

export async function workers16(env: Env, ownClients = false): Promise<ScenarioResult> {
  const { cfg } = env;
  // Between clients, the contract floors say in the same run how fast any lock of
  // DESIGN.md's shape can go when it barges and its waiters poll (CONTRACT_FLOOR), and
  // when every release hands it to the next waiter (CONTRACT_HANDOFF).
  const impls = ownClients ? [...env.impls, CONTRACT_FLOOR, CONTRACT_HANDOFF] : env.impls;
  const workers = 16;
  const id = ownClients ? 'clients16' : 'workers16';
  const clients = ownClients ? workers : 1;
  const records: RoundRecord[] = [];
  const samples = new Map<string, number[]>(impls.map((i) => [i.id, []]));
  for (let round = 1; round <= cfg.rounds; round++) {
    const child = Child.fork({ baseline: env.baseline });
    try {
      for (const impl of inRoundOrder(impls, round)) {
        let attemptNo = 0;
        const { rec, samples: got } = await measured(`${id} round ${round} ${impl.id}`, async () => {
          const { run: r, cost } = await child.request(
            { type: 'contended', impl: impl.id, port: env.single.port, name: `${id}:${round}:${++attemptNo}`, workers, clients, durationMs: cfg.contMs, graceMs: cfg.graceMs, warmMs: cfg.warmMs, contWarmMs: cfg.contWarmMs },
            cfg.contMs + cfg.graceMs + 60_000,
          );
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
          log(`${id} round ${round}/${cfg.rounds} ${impl.id.padEnd(16)} ${Math.round(rec.opsPerSec).toString().padStart(6)} CS/s, per worker ${pw}${r.errors ? `, ${r.errors} errors` : ''}${r.stuck ? `, ${r.stuck} stuck` : ''}${r.overlaps ? `, ${r.overlaps} OVERLAPS` : ''}${foreignNote(cost)}`);
          return { rec, samples: r.waits };
        });
        records.push(rec);
        append(samples.get(impl.id)!, got);
      }
    } finally {
      child.kill();
    }
  }
  return {
    id,
    title: ownClients ? '4. 16 clients on one key, one process, one worker each (critical section: setImmediate)' : '3. 16 workers on one key, one process, one shared client (critical section: setImmediate)',
    kind: 'contended',
    latency: 'wait',
    floor: 'raw',
    params: { workers, clients, durationMs: cfg.contMs, contendedWarmMs: cfg.contWarmMs, rounds: cfg.rounds, freshProcessPerRound: true, rawPollMs: POLL_MS, peerRetryMs: PEER_RETRY_MS, leaseMs: LEASE },
    summaries: summarize(impls, 'raw', records, samples),
    rounds: records,
  };
}
