import type { Hold } from '../engine/hold.js';
import type { Primitive } from '../primitives/primitive.js';
import type { LockKeys } from '../store/types.js';
import type { LockPort } from './port.js';

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
   * One unlock of every name, in reverse acquisition order; every name is tried even
   * when one fails, then the first failure is thrown (a lost name's LockLostError, or
   * the LockError of a release that could not reach Redis: that key expires within
   * its lease). The signal follows the holds until every release has settled: a loss
   * the release itself finds aborts it, as it aborts a Lock's.
   */
  async release(port: LockPort): Promise<void> {
    let first: { error: unknown } | undefined;
    for (const hold of [...this.holds].reverse()) {
      try {
        await port.release(hold);
      } catch (error) {
        first ??= { error };
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
 * Takes every name for owner, all or nothing, one at a time in the global order
 * (`ordered`, sorted by name), each with what is left of the one wait budget.
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
 * Any failure (the budget ran out, an attempt failed at the end of the wait, an abort,
 * the client closing, a name lost meanwhile) gives back what was taken, in reverse,
 * before the call settles. A budget already spent still allows one attempt per name
 * left (waitTime 0 is one attempt), so the call settles within waitTime plus one command
 * bound per name.
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
  const deadline = waitTime === undefined ? undefined : now() + waitTime;
  const taken: Hold[] = [];
  // Ends the wait for a later name when the caller aborts or a name taken is lost
  // (with that name's LockLostError): waiting on would only hold the others for nothing.
  const stop = new AbortController();
  const detachers: (() => void)[] = [];
  const follow = (source: AbortSignal) => {
    if (source.aborted) return stop.abort(source.reason);
    const onAbort = () => stop.abort(source.reason);
    source.addEventListener('abort', onAbort, { once: true });
    detachers.push(() => source.removeEventListener('abort', onAbort));
  };
  if (signal) follow(signal);
  try {
    for (const keys of ordered) {
      const budget = deadline === undefined ? undefined : Math.max(0, deadline - now());
      const hold = await port.acquire(primitive, keys, owner, leaseTime, budget, stop.signal);
      if (!hold) {
        await giveBack(port, taken);
        return { timedOut: keys.name };
      }
      taken.push(hold);
      follow(hold.signal);
    }
  } catch (error) {
    await giveBack(port, taken);
    throw error;
  } finally {
    for (const detach of detachers) detach();
  }
  // A name lost after the last wait ended (its grant on the way): all or nothing here too.
  const lost = taken.find((h) => !h.live);
  if (lost) {
    await giveBack(port, taken);
    throw lost.lost;
  }
  return new HoldGroup(taken);
}

/**
 * Releases what a failed take holds, in reverse. Its errors are not the caller's: a
 * lost name was reported by its 'lost' event, and a release that could not reach Redis
 * leaves a key that expires within its lease.
 */
async function giveBack(port: LockPort, taken: Hold[]): Promise<void> {
  await new HoldGroup(taken).release(port).catch(() => undefined);
}
