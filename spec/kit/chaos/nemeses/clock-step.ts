/**
 * A server's wall clock stepped forward by 0.5 to 2 leases, and back again 1 to 3 leases
 * later (the clock shim, spec/kit/servers/clock.ts): Redis expires keys by that clock, so
 * a lease ends early and another owner can get in before the holder hears of it. It
 * excuses nothing: the mode that injects it is one docs/safety.md calls unsafe, and its
 * overlaps show; the fenced register shows whether the tokens still fenced them.
 */
import { sleep } from '../timing';
import type { Nemesis } from './nemesis';

export const clockStep: Nemesis = {
  async inject(run) {
    const { clocks } = run.servers;
    if (clocks.length === 0) throw new Error('clockStep needs servers started with a steppable clock (ChaosOptions.clock)');
    const master = run.rng.int(0, clocks.length - 1);
    const clock = clocks[master]!;
    clock.set(run.rng.int(Math.round(run.lease * 0.5), run.lease * 2));
    const begin = Date.now();
    await sleep(run.rng.int(run.lease, run.lease * 3));
    clock.set(0);
    return { kind: 'clockStep', master, begin, end: Date.now() };
  },
};
