import { heldUntil } from '../store/lease-margin.js';
import type { RenewOutcome, Store } from '../store/types.js';
import type { Watchdog } from '../watchdog/watchdog.js';
import type { LockUnavailableError } from '../errors/LockUnavailableError.js';
import type { Hold } from './hold.js';
import { unavailable } from './unavailable.js';

const now = () => performance.now();

/**
 * Per hold: 'ok' when Redis confirmed the re-lease (the deadline is then the
 * re-lease's); 'lost' when the hold ended (Redis says it is gone or taken: it is lost);
 * the error when Redis could not be reached: the hold stays, up to a deadline no later
 * than the re-lease's, for the caller to give back.
 */
export type ReLeased = 'ok' | 'lost' | { readonly error: LockUnavailableError };

/** What a re-lease needs from the engine. */
export interface ReLeaseHost {
  readonly store: Store;
  readonly watchdog: Watchdog;
  timeoutFor(lease: number): number;
}

/**
 * Gives each hold a fixed lease of `lease` ms counted from now (a multi-lock's names
 * taken early, once the last is held): one store renewal, so one script call per
 * master or Cluster slot. From the send on, no hold is renewed by the watchdog, and
 * each deadline is at most the re-lease's own (Hold.fixLease), so the client never
 * counts on a key longer than Redis keeps it, whether the re-lease lands or not.
 * `settleBy`: the take's (AcquireRequest.settleBy), which its renewal keeps too.
 */
export async function reLease(host: ReLeaseHost, holds: readonly Hold[], lease: number, settleBy = Infinity): Promise<ReLeased[]> {
  const sending = holds.filter((h) => h.joinable);
  if (sending.length === 0) return holds.map(() => 'lost');
  const bound = heldUntil(now(), lease);
  for (const hold of sending) {
    hold.fixLease(lease, bound);
    host.watchdog.fixed(hold);
  }
  const items = sending.map((h) => ({ keys: h.keys, owner: h.owner, lease, levels: h.count, renewal: h.primitive.renewal }));
  const timeout = Math.max(1, Math.min(host.timeoutFor(lease), bound - now(), settleBy - now()));
  const outcomes: RenewOutcome[] = await host.store.renew(items, timeout).catch((error: Error) => sending.map(() => ({ ok: false as const, error })));
  const answers = new Map<Hold, ReLeased>();
  sending.forEach((hold, i) => {
    const outcome = outcomes[i];
    if (!hold.joinable) return; // ended meanwhile (lost at its deadline)
    if (outcome.ok) {
      hold.leasedUntil(outcome.validUntil);
      host.watchdog.touched(hold);
      answers.set(hold, 'ok');
    } else if ('reason' in outcome) {
      hold.lose(outcome.reason);
    } else {
      answers.set(hold, { error: unavailable(hold.keys.name, outcome.error) });
    }
  });
  return holds.map((h) => answers.get(h) ?? 'lost');
}
