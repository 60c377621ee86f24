/**
 * Replies lost for a moment, then the connections reset, three times: the server ran
 * commands it never answered, and ioredis resends them after reconnecting, so those
 * scripts run twice. Nothing may be counted twice.
 */
import { sleep } from '../timing';
import type { Nemesis } from './nemesis';

export const drop: Nemesis = {
  async inject(run) {
    const slot = await run.target();
    const begin = Date.now();
    for (let i = 0; i < 3; i++) {
      for (const p of slot.proxies) p.loseReplies();
      await sleep(run.rng.int(20, 100));
      for (const p of slot.proxies) {
        p.drop();
        p.resume();
      }
      await sleep(run.rng.int(20, 100));
    }
    return { kind: 'drop', worker: slot.index, begin, end: Date.now() };
  },
};
