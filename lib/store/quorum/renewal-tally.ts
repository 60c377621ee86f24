import { LockError } from '../../errors/LockError.js';
import type { RenewOutcome } from '../types.js';

import type { Reply } from './reads.js';

/** What a majority said about one renewed hold, and which masters lost it. */
export type RenewalTally =
  | { outcome: 'renewed'; lostOn: number[] }
  | { outcome: 'gone' }
  | { outcome: 'failed'; error: Error };

/**
 * The quorum's verdict on item i of a renewal batch, a pure function of each master's
 * reply: renewed when a majority renewed it (with the masters that answered "deleted",
 * to be given the hold back); gone when more than a minority no longer has it; else a
 * transient failure (retried while the lease lasts).
 */
export function tallyRenewal(perMaster: readonly Reply<RenewOutcome[]>[], i: number, quorum: number): RenewalTally {
  let ok = 0;
  let gone = 0;
  const lostOn: number[] = [];
  let error: Error | undefined;
  perMaster.forEach((reply, master) => {
    if (!reply.ok) return void (error = reply.error);
    const o = reply.value[i];
    if (o.ok) ok += 1;
    else if ('reason' in o) {
      gone += 1;
      if (o.reason === 'deleted') lostOn.push(master);
    } else error = o.error;
  });
  if (ok >= quorum) return { outcome: 'renewed', lostOn };
  if (gone > perMaster.length - quorum) return { outcome: 'gone' };
  return { outcome: 'failed', error: error ?? new LockError('renewal reached no majority') };
}
