/** SIGKILL of a worker process, which is spawned again (its holds are cut at the kill). */
import type { Nemesis } from './nemesis';

export const kill: Nemesis = {
  async inject(run) {
    const slot = await run.target();
    await slot.ready;
    const pid = slot.child!.pid;
    slot.expectedExit = true;
    slot.child!.kill('SIGKILL');
    const begin = Date.now();
    await slot.exited;
    const end = Date.now();
    slot.spawn();
    return { kind: 'kill', worker: slot.index, pid, begin, end };
  },
};
