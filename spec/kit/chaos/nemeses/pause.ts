/** SIGSTOP of a worker for 1.5 to 2.5 leases, then SIGCONT: its holds lapse while it cannot know. */
import { sleep } from '../timing';
import type { Nemesis } from './nemesis';

export const pause: Nemesis = {
  async inject(run) {
    const slot = await run.target();
    await slot.ready;
    const child = slot.child!;
    child.kill('SIGSTOP');
    const begin = Date.now();
    await sleep(run.rng.int(Math.round(run.lease * 1.5), Math.round(run.lease * 2.5)));
    child.kill('SIGCONT');
    return { kind: 'pause', worker: slot.index, pid: child.pid, begin, end: Date.now() };
  },
};
