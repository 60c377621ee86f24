import type { Hold } from '../../engine/hold.js';
import type { Primitive } from '../primitive.js';
import type { LockKeys } from '../../store/types.js';
import type { LockUnavailableError } from '../../errors/LockUnavailableError.js';
import type { LockPort } from '../../handles/port.js';
import { WaitStop } from './wait-stop.js';

const now = () => performance.now();

/**
 * The holds of one multi-lock acquisition, one per name, in acquisition order. Its
 * signal aborts, with that name's LockLostError, when any of them is lost; it listens
 * to the holds only once someone asks for it, and stops when the group is released.
 */
export class HoldGroup {
  /** Fencing token per name (a null-prototype object: any name is a safe key). */
  readonly tokens: Readonly<Record<string, number>>;
  private controller: AbortController | undefined;
  private readonly detachers: (() => void)[] = [];

  constructor(readonly holds: readonly Hold[]) {
    const tokens = Object.create(null) as Record<string, number>;
    for (const hold of holds) tokens[hold.keys.name] = hold.token;
    this.tokens = Object.freeze(tokens);
  }

  /** The owner of every hold in the group. */
  get owner(): string {
    return this.holds[0].owner;
  }

  /** Every name is still held (or being released). */
  get live(): boolean {
    return this.holds.every((h) => h.live);
  }

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const controller = new AbortController();
    this.controller = controller;
    for (const hold of this.holds) {
      const own = hold.signal;
      if (own.aborted) {
        controller.abort(own.reason);
        break;
      }
      const onAbort = () => controller.abort(own.reason);
      own.addEventListener('abort', onAbort, { once: true });
      this.detachers.push(() => own.removeEventListener('abort', onAbort));
    }
    return controller.signal;
  }

  /**
   * One unlock of every name, in reverse acquisition order (in one call when every name
   * is at its last level and they share a master or slot: LockPort.releaseAll); every name is tried even
   * when one fails, then the first failure is thrown (a lost name's LockLostError, or
   * the LockError of a release that could not reach Redis: that key expires within
   * its lease). The signal follows the holds until every release has settled: a loss
   * the release itself finds aborts it, as it aborts a Lock's.
   */
  async release(port: LockPort): Promise<void> {
    let first: { error: unknown } | undefined;
    const reversed = [...this.holds].reverse();
    const together = port.releaseAll(reversed);
    if (together) {
      const failed = (await Promise.allSettled(together)).find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) first = { error: failed.reason };
    } else {
      for (const hold of reversed) {
        try {
          await port.release(hold);
        } catch (error) {
          first ??= { error };
        }
      }
    }
    for (const detach of this.detachers.splice(0)) detach();
    if (first) throw first.error;
  }
}

/** What a take that ran out of wait budget reports: the name still held by another owner. */
export interface TimedOut {
  readonly timedOut: string;
}

/**
 * Takes every name for owner, all or nothing: in one call when every name is free and
 * nobody waits on any (LockPort.acquireAll: names on one master, or one Cluster slot),
 * else one at a time in the global order (`ordered`, sorted by name), each with what is
 * left of the one wait budget.
 *
 * Why hold A while waiting for B (ordered acquisition) rather than "try all, give all
 * back, retry" (redlock's multi-resource acquire):
 * - deadlock freedom: every multi-lock takes its names in the same total order, so no
 *   cycle of waits can form between them (a holder of a later name never waits for an
 *   earlier one);
 * - no livelock or starvation by retry: a waiter queues on each name like any waiter of
 *   that lock (this client's FIFO with hand-off, pub/sub wake-up across clients), so it
 *   is served in that lock's order, instead of two contenders giving back and retrying
 *   in step forever, and a multi-lock is not starved by single-name holders that never
 *   leave all of its names free at one instant;
 * - the price: a name taken early stays held while a later one is awaited, so its
 *   other users wait longer (as with any nested locks taken in order).
 *
 * Leases: with a fixed `leaseTime`, the names before the last are taken under the
 * watchdog (so none runs out however long a later one takes), and once the last is
 * held they are re-leased to `leaseTime` in one renewal per master or slot: every
 * name's lease starts when the last name is held. A name this owner already held
 * (a reentry) keeps its outer hold's lease.
 *
 * A name lost while a later one is awaited (or by its re-lease) ends that wait; it and
 * every name after it are given back and taken again, in order, within the same budget.
 * A loss once the budget is spent ends the take as a timeout of that name (so a take
 * always ends). Any other failure (the budget ran out, an attempt or the re-lease could
 * not reach Redis, an abort, the client closing) gives back what was taken before the
 * call settles. A budget already spent still allows one attempt per name left (waitTime
 * 0 is one attempt), but every attempt and the re-lease settle within one command bound
 * past the budget (`settleBy`, AcquireRequest), as one wait's would: the call settles
 * within waitTime plus that bound, and one more for the give-back (every name at once)
 * of a take that ends without every name.
 */
export async function takeAll(
  port: LockPort,
  primitive: Primitive,
  ordered: readonly LockKeys[],
  owner: string,
  leaseTime: number | undefined,
  waitTime: number | undefined,
  signal: AbortSignal | undefined,
): Promise<HoldGroup | TimedOut> {
  const deadline = waitTime === undefined ? Infinity : now() + waitTime;
  // Names asked one after another share the one command bound past the budget.
  const settleBy = deadline + port.commandBound(leaseTime);
  const together = await port.acquireAll(primitive, ordered, owner, leaseTime, waitTime, signal);
  if (together) return new HoldGroup(together);
  const taken: Hold[] = [];
  // Taken by this call under the watchdog for a fixed leaseTime: re-leased once all are held.
  const early = new Set<Hold>();
  /** Gives back the first lost name and the ones after it; the name to report if the take must end. */
  const dropLost = async (): Promise<string | undefined> => {
    const at = taken.findIndex((h) => !h.live);
    if (at === -1) return undefined;
    const name = taken[at].keys.name;
    await giveBack(port, taken.splice(at));
    return name;
  };
  try {
    for (;;) {
      while (taken.length < ordered.length) {
        const keys = ordered[taken.length];
        const watched = leaseTime !== undefined && taken.length < ordered.length - 1 && !port.holdOf(keys, owner)?.joinable;
        const budget = deadline === Infinity ? undefined : Math.max(0, deadline - now());
        const stop = new WaitStop(signal, taken);
        let hold: Hold | null;
        try {
          hold = await port.acquire(primitive, keys, owner, watched ? undefined : leaseTime, budget, stop.signal, settleBy);
        } catch (error) {
          if (!stop.byLoss || signal?.aborted) throw error;
          hold = null;
        } finally {
          stop.detach();
        }
        if (hold) {
          taken.push(hold);
          if (watched) early.add(hold);
        }
        // A name lost during this wait, or while the grant was on its way.
        const lost = await dropLost();
        if (lost !== undefined && now() >= deadline) return await timedOut(port, taken, lost);
        if (!hold && lost === undefined) return await timedOut(port, taken, keys.name);
      }
      const fixed = taken.filter((h) => early.has(h));
      const answers = fixed.length > 0 ? await port.reLease(fixed, leaseTime!, settleBy) : [];
      const failed = answers.find((a): a is { error: LockUnavailableError } => typeof a === 'object');
      if (failed) throw failed.error;
      const lost = await dropLost();
      if (lost === undefined) return new HoldGroup(taken);
      if (now() >= deadline) return await timedOut(port, taken, lost);
    }
  } catch (error) {
    await giveBack(port, taken);
    throw error;
  }
}

/** The take ends without every name: what it holds goes back first. */
async function timedOut(port: LockPort, taken: Hold[], name: string): Promise<TimedOut> {
  await giveBack(port, taken.splice(0));
  return { timedOut: name };
}

/**
 * Releases what a failed take holds, every name at once (in one call where
 * LockPort.releaseAll can): the give-back settles within one command bound, however
 * many names were taken. Its errors are not the caller's: a lost name was reported by
 * its 'lost' event, and a release that could not reach Redis leaves a key that expires
 * within its lease.
 */
async function giveBack(port: LockPort, taken: Hold[]): Promise<void> {
  if (taken.length === 0) return;
  await Promise.allSettled(port.releaseAll(taken) ?? taken.map((hold) => port.release(hold)));
}
