import { isFinal } from '../errors/final.js';
import type { Primitive } from '../primitives/primitive.js';
import type { AcquireResult, Granted, LockKeys } from '../store/types.js';
import type { Hold } from './hold.js';
import { lateGrant } from './late-grant.js';
import type { HoldRegistry } from './registry.js';
import type { AcquireRequest } from './request.js';
import { unavailable } from './unavailable.js';

const now = () => performance.now();

/** What taking several names at once needs from the engine. */
export interface TakeHost {
  readonly holds: HoldRegistry;
  readonly closed: boolean;
  readonly settings: { readonly watchdogTimeout: number };
  timeoutFor(lease: number): number;
  /** Makes a grant a hold (throws, having given it back, when it came too late). */
  grant(request: AcquireRequest, granted: Granted): Hold;
  giveBack(request: AcquireRequest): Promise<void>;
  release(hold: Hold): Promise<void>;
  failed(request: AcquireRequest, error: unknown, attempt: number): void;
}

/**
 * A multi-lock's names for owner in one call, all or none (Primitive.attemptAll), when
 * owner holds none of them yet (a reentry goes name by name, keeping its outer hold's
 * lease). Every hold's lease starts at that one call. Resolves with a hold per name, or
 * undefined when the names are to be taken one at a time: one was busy or queued on
 * (nothing was taken), the call cannot cover them, or it failed with budget left (the
 * failure is reported as an acquireFailed). Rejects as one attempt does when it failed
 * with the budget spent (LockUnavailableError), or on an abort. Whatever was granted and
 * not kept is given back before it settles (exactly-once.ts holds owner's next
 * acquisition of a name back until its give-back has settled).
 */
export async function takeAtOnce(
  host: TakeHost,
  primitive: Primitive,
  keys: readonly LockKeys[],
  owner: string,
  leaseTime: number | undefined,
  waitTime: number | undefined,
  signal: AbortSignal | undefined,
): Promise<Hold[] | undefined> {
  if (!primitive.attemptAll || host.closed || signal?.aborted || keys.some((k) => host.holds.get(k.id, owner))) return undefined;
  const lease = leaseTime ?? host.settings.watchdogTimeout;
  const start = now();
  const deadline = waitTime === undefined ? Infinity : start + waitTime;
  const calls = primitive.attemptAll(keys, owner, lease, host.timeoutFor(lease));
  if (!calls) return undefined;
  const requests = keys.map((k): AcquireRequest => ({ keys: k, owner, primitive, lease, renewed: leaseTime === undefined, start, deadline, settleBy: Infinity, signal }));
  // Aborted while out: its reply is awaited all the same (within the command bound), so
  // that what it granted goes back before the call settles.
  const results = await Promise.allSettled(calls);
  const granted = (r: PromiseSettledResult<AcquireResult>): r is PromiseFulfilledResult<Granted> => r.status === 'fulfilled' && r.value.granted;
  const giveBack = (from: number) => Promise.all(results.map((r, i) => (i >= from && granted(r) ? host.giveBack(requests[i]) : undefined)));
  let failure: { error: unknown; at: number } | undefined;
  results.forEach((r, i) => {
    if (r.status === 'rejected') failure ??= { error: r.reason, at: i };
    // Read after its lease ran out (late-grant.ts): no hold, a failed attempt.
    else if (r.value.granted && !failure) {
      const late = lateGrant(requests[i], r.value);
      if (late) failure = { error: late, at: i };
    }
  });
  if (!failure && !signal?.aborted && results.every(granted)) {
    const holds: Hold[] = [];
    try {
      for (let i = 0; i < results.length; i++) holds.push(host.grant(requests[i], (results[i] as PromiseFulfilledResult<Granted>).value));
      return holds;
    } catch (error) {
      // grant() found this one late after all (and gives it back): the others go back too.
      await giveBack(holds.length + 1);
      await Promise.allSettled(holds.map((h) => host.release(h)));
      failure = { error, at: holds.length };
    }
  } else {
    await giveBack(0);
  }
  if (signal?.aborted) throw signal.reason;
  if (!failure) return undefined;
  const { error, at } = failure;
  if (isFinal(error)) throw error;
  if (now() >= deadline) throw unavailable(keys[at].name, error);
  host.failed(requests[at], error, 1);
  return undefined;
}
