/**
 * Scenario 4: 4 processes on one key, one worker each, 0 ms and 2 ms think time; fresh
 * processes for every round (see workers16.ts). Overlaps and hand-offs are judged
 * from the acquire/release times all children report on one clock (hrUs).
 */
import { hrUs } from '../async';
import { Child } from '../children';
import { PEER_RETRY_MS, POLL_MS } from '../config';
import { foreignNote, measured } from '../disturbance';
import type { Env } from '../env';
import { CONTRACT_FLOOR } from '../impls/contract-floor';
import { CONTRACT_HANDOFF } from '../impls/contract-handoff';
import { inRoundOrder } from '../impls/registry';
import { log, noteError } from '../log';
import { Meter } from '../meter';
import { summarize, type RoundRecord, type ScenarioResult } from '../results';
import { append, sum } from '../stats';

const PROCESSES = 4;

/**
 * The unmeasured contention before each implementation's window (Config.contWarmMs),
 * scaled by the processes: each runs about a quarter of the sections one process runs in
 * the single-process scenarios, so it needs four times as long to reach the same steady
 * state. With 1 s, whichever holdfast lock ran first in a round's processes measured
 * 15-40 % below the same code run right after it (which found the JIT warm); with 4 s,
 * 3-10 %.
 */
const warmMs = (contWarmMs: number) => contWarmMs * PROCESSES;

export async function procs4(env: Env, thinkMs: number): Promise<ScenarioResult> {
  const { cfg } = env;
  // Without think time the peers barge: the contract floors say in the same run how
  // fast any lock of DESIGN.md's shape can go that way (CONTRACT_FLOOR), and with every
  // release handing it to the next waiter (CONTRACT_HANDOFF).
  const impls = thinkMs === 0 ? [...env.impls, CONTRACT_FLOOR, CONTRACT_HANDOFF] : env.impls;
  const records: RoundRecord[] = [];
  const samples = new Map<string, number[]>(impls.map((i) => [i.id, []]));
  const meter = new Meter([env.admin]);
  const id = `procs4-${thinkMs}ms`;
  const children: Child[] = [];
  for (let round = 1; round <= cfg.rounds; round++) {
    children.forEach((c) => c.kill());
    children.length = 0;
    for (let i = 0; i < PROCESSES; i++) children.push(Child.fork({ baseline: env.baseline }));
    for (const impl of inRoundOrder(impls, round)) {
      let attemptNo = 0;
      const { rec, samples: got } = await measured(`${id} round ${round} ${impl.id}`, async () => {
        const name = `${id}:${round}:${++attemptNo}`;
        const openAll = (key: string) => Promise.all(children.map((c) => c.request({ type: 'open', impl: impl.id, ports: [env.single.port], name: key, warmMs: cfg.warmMs }, 30_000)));
        await openAll(name);
        try {
          // The same contention on the same key, unmeasured (see warmMs).
          if (cfg.contWarmMs > 0) {
            const warmStartUs = hrUs() + 150_000;
            const warm = await Promise.all(children.map((c) => c.request({ type: 'go', startAtUs: warmStartUs, durationMs: warmMs(cfg.contWarmMs), thinkMs, graceMs: cfg.graceMs }, warmMs(cfg.contWarmMs) + cfg.graceMs + 30_000)));
            // A wait still pending after the grace would run on into the measured window:
            // every child closes its runner (ending such waits) and opens a fresh one.
            if (warm.some((r) => r.stuck > 0)) {
              await Promise.all(children.map((c) => c.request({ type: 'close' }, 30_000)));
              await openAll(`${name}:after-warm`);
            }
          }
          await meter.start();
          const startAtUs = hrUs() + 150_000;
          const replies = await Promise.all(
            children.map((c) => c.request({ type: 'go', startAtUs, durationMs: cfg.procMs, thinkMs, graceMs: cfg.graceMs }, cfg.procMs + cfg.graceMs + 30_000)),
          );
          const cost = await meter.stop();
          // Node cost is the children's; the parent only waited.
          cost.nodeCpuUs = sum(replies.map((r) => r.cpuUs));
          cost.sent = sum(replies.map((r) => r.sent));
          const deadlineUs = startAtUs + cfg.procMs * 1000;
          const events = replies.flatMap((r, p) => r.acq.map((a, k) => ({ p, acq: a, rel: r.rel[k] ?? Infinity }))).sort((a, b) => a.acq - b.acq);
          let overlaps = 0;
          let handoffs = 0;
          let last = -1;
          const perProc = children.map(() => 0);
          events.forEach((e, k) => {
            if (k > 0 && e.acq < events[k - 1].rel) overlaps++;
            if (e.acq < deadlineUs) {
              perProc[e.p]++;
              if (last !== -1 && last !== e.p) handoffs++;
              last = e.p;
            }
          });
          const cs = sum(perProc);
          const rec: RoundRecord = {
            impl: impl.id,
            round,
            opsPerSec: (cs / cfg.procMs) * 1000,
            ops: cs,
            errors: sum(replies.map((r) => r.errors)),
            stuck: sum(replies.map((r) => r.stuck)),
            cost,
            costOps: Math.max(1, events.length),
            perWorker: perProc,
            handoffsPerSec: (handoffs / cfg.procMs) * 1000,
            overlaps,
          };
          log(`${id} round ${round}/${cfg.rounds} ${impl.id.padEnd(16)} ${Math.round(rec.opsPerSec).toString().padStart(6)} CS/s, per process ${perProc.join('/')}${rec.errors ? `, ${rec.errors} errors` : ''}${rec.stuck ? `, ${rec.stuck} stuck` : ''}${overlaps ? `, ${overlaps} OVERLAPS` : ''}${foreignNote(cost)}`);
          return { rec, samples: replies.flatMap((r) => r.waits) };
        } finally {
          await Promise.all(children.map((c) => c.request({ type: 'close' }, 30_000).catch((e) => noteError('child close', e))));
        }
      });
      records.push(rec);
      append(samples.get(impl.id)!, got);
    }
  }
  children.forEach((c) => c.kill());
  return {
    id,
    title: `5. 4 processes on one key, ${thinkMs} ms think time`,
    kind: 'contended',
    latency: 'wait',
    floor: 'raw',
    params: { processes: PROCESSES, thinkMs, durationMs: cfg.procMs, contendedWarmMs: warmMs(cfg.contWarmMs), rounds: cfg.rounds, freshProcessesPerRound: true, rawPollMs: POLL_MS, peerRetryMs: PEER_RETRY_MS },
    summaries: summarize(impls, 'raw', records, samples),
    rounds: records,
  };
}
