/**
 * A holder's event loop blocked (a long synchronous job): the worker busy-waits for 0.4
 * to 1.5 leases, longer than a renewal interval (a third of the lease), sometimes
 * longer than the lease. Nothing runs meanwhile, its deadlines neither; after a stall
 * longer than the lease it must report the loss as its loop runs again (the worker's
 * loop-gap sampler logs the stall, as the checker's starved-holder excuse requires).
 */
import { withDeadline } from '../timing';
import type { Nemesis } from './nemesis';

export const loopStall: Nemesis = {
  async inject(run) {
    const slot = await run.target();
    await slot.ready;
    const pid = slot.child!.pid;
    const ms = run.rng.int(Math.round(run.lease * 0.4), Math.round(run.lease * 1.5));
    const blocked = slot.message((m) => (typeof m === 'object' && m !== null && 'blocked' in m ? (m as { blocked: [number, number] }).blocked : undefined));
    slot.child!.send({ block: ms });
    const [begin, end] = await withDeadline(blocked, ms + 10_000, 'loop stall');
    return { kind: 'loopStall', worker: slot.index, pid, begin, end };
  },
};
