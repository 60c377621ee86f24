import { LockError } from '../../errors/LockError.js';
import type { RenewOutcome } from '../types.js';

import type { Reply } from './reads.js';

/** What a majority said about one renewed hold, and which masters lost it. */
export type RenewalTally =
  | { outcome: 'renewed'; lostOn: number[] }
  | { outcome: 'gone' }
  | { outcome: 'failed'; error: Error };

/** A renewal a master confirmed before its connection broke: that master may have restarted empty since. */
const BROKE = new LockError('the connection to this master broke while the renewal batch was out, so its renewal may have been lost with a restart: not counted');

/**
 * The quorum's verdict on item i of a renewal batch, a pure function of each master's
 * reply: renewed when a majority renewed it (with the masters that answered "deleted",
 * to be given the hold back); gone when more than a minority no longer has it; else a
 * transient failure (retried while the lease lasts).
 * `broke[m]`: master m's connection broke while the batch was out. Its "renewed" counts
 * for nothing: given before a restart that emptied it, it would make a majority that no
 * longer holds the lock, and the hold would be put back where it was lost.
 */
export function tallyRenewal(perMaster: readonly Reply<RenewOutcome[]>[], i: number, quorum: number, broke: readonly boolean[] = []): RenewalTally {
  let ok = 0;
  let gone = 0;
  const lostOn: number[] = [];
  let error: Error | undefined;
  perMaster.forEach((reply, master) => {
    if (!reply.ok) return void (error = reply.error);
    const o = reply.value[i];
    if (o.ok && broke[master]) error = BROKE;
    else if (o.ok) ok += 1;
    else if ('reason' in o) {
      gone += 1;
      if (o.reason === 'deleted') lostOn.push(master);
    } else error = o.error;
  });
  if (ok >= quorum) return { outcome: 'renewed', lostOn };
  if (gone > perMaster.length - quorum) return { outcome: 'gone' };
  return { outcome: 'failed', error: error ?? new LockError('renewal reached no majority') };
}
