/** A slow network for one worker: its proxies delay every chunk, either way, by 10 to 50 % of the lease, for 1 to 3 leases. */
import { sleep } from '../timing';
import type { Nemesis } from './nemesis';

export const latency: Nemesis = {
  async inject(run) {
    const slot = await run.target();
    const ms = run.rng.int(Math.round(run.lease * 0.1), Math.round(run.lease * 0.5));
    for (const p of slot.proxies) p.latency(ms);
    const begin = Date.now();
    await sleep(run.rng.int(run.lease, run.lease * 3));
    for (const p of slot.proxies) p.latency(0);
    return { kind: 'latency', worker: slot.index, begin, end: Date.now() };
  },
};
