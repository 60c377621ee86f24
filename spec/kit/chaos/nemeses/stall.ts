/** A worker cut off from every master for 1.2 to 2.2 leases (its proxies blackhole), then its connections reset. */
import { sleep } from '../timing';
import type { Nemesis } from './nemesis';

export const stall: Nemesis = {
  async inject(run) {
    const slot = await run.target();
    for (const p of slot.proxies) p.blackhole();
    const begin = Date.now();
    await sleep(run.rng.int(Math.round(run.lease * 1.2), Math.round(run.lease * 2.2)));
    // Drop before forwarding again: what the blackhole swallowed leaves the old
    // connections out of step. All in one tick, so no connection slips in between.
    for (const p of slot.proxies) {
      p.drop();
      p.resume();
    }
    return { kind: 'stall', worker: slot.index, begin, end: Date.now() };
  },
};
