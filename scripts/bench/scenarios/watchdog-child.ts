/**
 * Child side of scenario 6 (run with --expose-gc): 10 000 held locks under the
 * watchdog (round trips and CPU per renewal tick, heap per lock), then heap growth
 * over many lock/unlock cycles. Counts come from holdfast's public events only.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pool } from '../async';
import { WATCHDOG_TIMEOUT } from '../config';
import { cpuUs as cpuUsOf, snapServer } from '../counters';
import { connect, quitAll } from '../impls/connect';
import { loadHoldfast } from '../impls/holdfast-module';
import type { Registry } from '../impls/registry';
import type { ReplyBodies, RequestOf } from '../ipc';
import { log, noteError } from '../log';
import type { WatchdogResult } from '../results';
import { sum } from '../stats';

export async function watchdogInChild(registry: Registry, m: RequestOf<'watchdog'>): Promise<ReplyBodies['watchdog']> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('watchdog child needs --expose-gc');
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const variant = registry.variantById(m.impl);
  const key = (name: string) => variant.keyPrefix + name;
  const { LockClient } = loadHoldfast(variant.root);
  const n = m.locks;
  const conn = await connect(m.port);
  const admin = await connect(m.port);
  const client = new LockClient(conn, { watchdogTimeout: WATCHDOG_TIMEOUT });
  let renewals = 0;
  let ticks = 0;
  let lastRenewal = -Infinity;
  let lost = 0;
  let renewalFailed = 0;
  client.on('renewed', () => {
    renewals++;
    const t = performance.now();
    // One batch settles in one synchronous loop: a gap starts the next tick.
    if (t - lastRenewal > 5) ticks++;
    lastRenewal = t;
  });
  client.on('lost', () => void lost++);
  client.on('renewalFailed', () => void renewalFailed++);
  client.on('error', (e) => noteError('watchdog child', e));
  try {
    const warm = client.getLock(key('wd:warm'));
    for (let i = 0; i < 2_000; i++) {
      await warm.lock();
      await warm.unlock();
    }
    const heapBase = heap();
    let handles = Array.from({ length: n }, (_, i) => client.getLock(key(`wd:${i}`)));
    const heapHandles = heap();
    const t0 = performance.now();
    await pool(n, 200, (i) => handles[i].lock());
    const acquireMs = performance.now() - t0;
    const heapHeld = heap();
    log(`watchdog ${variant.id}: ${n} locks held (acquired in ${Math.round(acquireMs)} ms), measuring ${m.periods} renewal periods`);
    // Steady state: every hold has had its first renewal.
    await sleep(WATCHDOG_TIMEOUT / 3 + 300);
    const s0 = await snapServer(admin);
    const cpu0 = process.cpuUsage();
    const r0 = renewals;
    const k0 = ticks;
    await sleep((m.periods * WATCHDOG_TIMEOUT) / 3);
    const cpuUs = cpuUsOf(process.cpuUsage(cpu0));
    const s1 = await snapServer(admin);
    const dRenewals = renewals - r0;
    const dTicks = Math.max(1, ticks - k0);
    const evalsha = s1.evalsha - s0.evalsha;
    const heapRenewing = heap();
    await pool(n, 200, (i) => handles[i].unlock());
    handles = [];
    const heapReleased = heap();

    // Heap growth over many lock/unlock cycles: 64 loops on 64 keys, 10 segments.
    const locks = Array.from({ length: 64 }, (_, i) => client.getLock(key(`wd:cycle:${i}`)));
    const heapSamples: { cycles: number; heapUsed: number }[] = [{ cycles: 0, heapUsed: heap() }];
    const segment = Math.ceil(m.cycles / 10);
    const perLoop = Math.ceil(segment / locks.length);
    let done = 0;
    const c0 = performance.now();
    const giveUp = c0 + 240_000;
    for (let s = 0; s < 10 && performance.now() < giveUp; s++) {
      await Promise.all(
        locks.map(async (lock) => {
          for (let i = 0; i < perLoop; i++) {
            await lock.lock();
            await lock.unlock();
          }
        }),
      );
      done += perLoop * locks.length;
      heapSamples.push({ cycles: done, heapUsed: heap() });
      log(`watchdog ${variant.id}: heap after ${done} cycles ${(heapSamples[heapSamples.length - 1].heapUsed / 1024 / 1024).toFixed(2)} MB`);
    }
    const cyclesMs = performance.now() - c0;
    // Growth after the first segment (warm-up), with a least-squares slope.
    const tail = heapSamples.slice(1);
    const growth = tail[tail.length - 1].heapUsed - tail[0].heapUsed;
    const mx = sum(tail.map((s) => s.cycles)) / tail.length;
    const my = sum(tail.map((s) => s.heapUsed)) / tail.length;
    const slope = sum(tail.map((s) => (s.cycles - mx) * (s.heapUsed - my))) / Math.max(1, sum(tail.map((s) => (s.cycles - mx) ** 2)));
    const result: WatchdogResult = {
      locks: n,
      watchdogTimeoutMs: WATCHDOG_TIMEOUT,
      acquireMs,
      periods: m.periods,
      ticks: dTicks,
      renewals: dRenewals,
      evalsha,
      redisCmds: s1.cmds - s0.cmds - 1,
      rtPerTick: evalsha / dTicks,
      renewalsPerTick: dRenewals / dTicks,
      rtPer100Renewals: (evalsha / Math.max(1, dRenewals)) * 100,
      nodeCpuMsPerTick: cpuUs / 1000 / dTicks,
      nodeCpuUsPerRenewal: cpuUs / Math.max(1, dRenewals),
      nodeCpuMsPerPeriod: cpuUs / 1000 / m.periods,
      redisCpuMsPerPeriod: ((s1.cpuS - s0.cpuS) * 1000) / m.periods,
      lost,
      renewalFailed,
      heapBaseBytes: heapBase,
      heapPerHandleBytes: (heapHandles - heapBase) / n,
      heapPerHeldLockBytes: (heapHeld - heapBase) / n,
      heapAfterRenewalsPerLockBytes: (heapRenewing - heapBase) / n,
      heapResidualPerLockBytes: (heapReleased - heapBase) / n,
      cycles: done,
      cyclesPerSec: (done / cyclesMs) * 1000,
      heapSamples,
      heapGrowthBytes: growth,
      heapGrowthBytesPer1kCycles: slope * 1000,
    };
    return { result };
  } finally {
    await client.close();
    await quitAll([conn, admin]);
  }
}
