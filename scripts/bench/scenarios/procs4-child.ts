/** Child side of scenario 4: one worker per process, opened, run at a common start time, closed. */
import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises';
import { hrUs, settleWithin } from '../async';
import { MAX_OPS_PER_LOOP } from '../config';
import { cpuUs, sentCommands } from '../counters';
import type { Registry } from '../impls/registry';
import type { ImplDef, Runner, Worker } from '../impls/types';
import type { ProcRun, RequestOf } from '../ipc';
import { noteError } from '../log';
import { cycleLoops } from '../loops';
import { closeRunner, openRunner } from '../runners';

export class ProcessWorker {
  private impl: ImplDef | undefined;
  private runner: Runner | undefined;
  private worker: Worker | undefined;

  constructor(private readonly registry: Registry) {}

  async open(m: RequestOf<'open'>): Promise<Record<string, never>> {
    this.impl = this.registry.byId(m.impl);
    this.runner = await openRunner(this.impl, m.ports);
    this.worker = this.runner.worker(m.name);
    // Warm up (connections, scripts) uncontended, on a key of this process only.
    await cycleLoops(this.runner, [`${m.name}:warm:${process.pid}`], m.warmMs, 1_000, null);
    return {};
  }

  async go(m: RequestOf<'go'>): Promise<ProcRun> {
    if (!this.worker) throw new Error('go before open');
    const w = this.worker;
    const deadlineUs = m.startAtUs + m.durationMs * 1000;
    await sleep(Math.max(0, (m.startAtUs - hrUs()) / 1000));
    const cpu0 = process.cpuUsage();
    const sent0 = sentCommands();
    const acq: number[] = [];
    const rel: number[] = [];
    const waits: number[] = [];
    let errors = 0;
    let waitingSince = NaN;
    const loop = (async () => {
      for (let n = 0; n < MAX_OPS_PER_LOOP && hrUs() < deadlineUs; n++) {
        const t0 = hrUs();
        waitingSince = t0;
        try {
          await w.acquire();
        } catch (e) {
          waitingSince = NaN;
          errors++;
          noteError('child acquire', e);
          await sleep(1);
          continue;
        }
        const t1 = hrUs();
        waitingSince = NaN;
        acq.push(t1);
        waits.push((t1 - t0) / 1000);
        await immediate();
        rel.push(hrUs());
        try {
          await w.release();
        } catch (e) {
          errors++;
          noteError('child release', e);
        }
        if (m.thinkMs > 0) await sleep(m.thinkMs);
      }
    })();
    const untilMs = performance.now() + (deadlineUs - hrUs()) / 1000 + m.graceMs;
    const stuck = await settleWithin([loop], untilMs);
    if (!Number.isNaN(waitingSince)) waits.push((hrUs() - waitingSince) / 1000);
    const cpu = process.cpuUsage(cpu0);
    // A stuck loop may still be waiting: it needs a fresh worker next time.
    if (stuck) this.worker = undefined;
    return { acq, rel, waits, errors, stuck, cpuUs: cpuUs(cpu), sent: sentCommands() - sent0 };
  }

  async close(): Promise<Record<string, never>> {
    if (this.impl && this.runner) await closeRunner(this.impl, this.runner);
    this.impl = undefined;
    this.runner = undefined;
    this.worker = undefined;
    return {};
  }
}
