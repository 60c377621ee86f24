import { LockError } from '../errors/LockError.js';
import { LockUnavailableError } from '../errors/LockUnavailableError.js';
import { LockNotHeldError } from '../errors/LockNotHeldError.js';
import type { ReleaseResult } from '../store/types.js';
import type { Hold } from './hold.js';
import type { HoldRegistry } from './registry.js';

/** What a release needs from the engine. */
export interface ReleaseHost {
  readonly holds: HoldRegistry;
  timeoutFor(lease: number): number;
  error(error: unknown): void;
  /** A release granted waiters at the queue's head: a message ('owner wait token') may name a wait of this client's. */
  readonly waits: { granted(message: string): void };
}

/**
 * One unlock of a hold, by its state:
 * - lost: rejects with the loss and touches nothing in Redis (one outstanding level fewer);
 * - held(n > 1): one level down;
 * - held(1): the last level: released (a queue's release may grant the lock to its head,
 *   maybe a wait of this client, handed over from the reply), or abandoned.
 *
 * The client's level count stands, whatever Redis counts: levels Redis has beyond it
 * (a grant run twice that could not be settled) belong to nobody, and adopted they
 * would outlive the caller's last unlock, renewed for good; the last unlock drops them.
 */
export function releaseHold(engine: ReleaseHost, hold: Hold): Promise<void> {
  // Not async: the unlock's own promise is the one of the call below (one layer less
  // on every unlock); the checks reject instead of throwing.
  if (hold.state === 'lost') {
    if (hold.unwind()) engine.holds.remove(hold);
    return Promise.reject(hold.lost);
  }
  if (!hold.joinable) return Promise.reject(new LockNotHeldError(hold.keys.name, 'it was already released'));
  if (hold.count > 1) return dropLevel(engine, hold);
  return releaseLast(engine, hold);
}

async function dropLevel(engine: ReleaseHost, hold: Hold): Promise<void> {
  const { keys, owner, primitive } = hold;
  const held = hold.count;
  hold.drop();
  let result: ReleaseResult;
  try {
    result = await primitive.release(keys, owner, held, engine.timeoutFor(hold.lease));
  } catch {
    // Did Redis drop the level? Unknown, and it need not be known: the level is dropped
    // here, and the caller's last unlock gives back any level Redis still counts. Kept,
    // it would have to be unlocked once more, which a caller unwinding with the error
    // (run() does) never does: the lock would be renewed for good. Rejecting would fail
    // a run() whose fn succeeded.
    return;
  }
  if (result.kind === 'decremented') return;
  if (result.kind === 'notHeld') goneAtUnlock(engine, hold);
  // 'released': Redis had fewer levels than the client (a master restarted empty and
  // the hold was put back with fewer): the hold ends here.
  hold.finishRelease();
}

function releaseLast(engine: ReleaseHost, hold: Hold): Promise<void> {
  const timeout = engine.timeoutFor(hold.lease);
  // From here on the watchdog never sends a renewal for this hold.
  hold.beginRelease();
  return settleLast(engine, hold, hold.primitive.release(hold.keys, hold.owner, hold.count, timeout), timeout);
}

/**
 * The last unlock of several holds of one owner (a multi-lock's names) in one call, when
 * each holds one level and its primitive can (Primitive.releaseAll); each then ends as
 * releaseHold() ends it. undefined: release them one at a time.
 */
export function releaseLastOfAll(engine: ReleaseHost, holds: readonly Hold[]): Promise<void>[] | undefined {
  const [first] = holds;
  if (!first?.primitive.releaseAll || holds.some((h) => h.state !== 'held' || h.count !== 1 || h.owner !== first.owner)) return undefined;
  const timeout = Math.min(...holds.map((h) => engine.timeoutFor(h.lease)));
  const calls = first.primitive.releaseAll(
    holds.map((h) => h.keys),
    first.owner,
    timeout,
  );
  if (!calls) return undefined;
  // In the same tick as the send: the watchdog sends no renewal of these holds after it.
  for (const hold of holds) hold.beginRelease();
  return holds.map((hold, i) => settleLast(engine, hold, calls[i], timeout));
}

/** The end of a hold's last unlock, by what `call` (its release in Redis) answers. */
async function settleLast(engine: ReleaseHost, hold: Hold, call: Promise<ReleaseResult>, timeout: number): Promise<void> {
  const { keys } = hold;
  let result: ReleaseResult;
  try {
    result = await call;
  } catch (error) {
    hold.abandon();
    throw new LockUnavailableError(keys.name, `unlock of '${keys.name}' failed; the lock will expire within its lease`, { cause: error });
  }
  switch (result.kind) {
    case 'notHeld':
      goneAtUnlock(engine, hold);
    case 'decremented':
      // Redis counts levels nobody here holds (a grant not yet given back): this unlock
      // ends the hold all the same. Kept and renewed, those levels would hold the lock
      // for good; dropped, it is free.
      hold.finishRelease();
      void dropLevels(engine, hold, result.count, timeout);
      return;
    case 'released':
      if (result.brokeAt !== undefined && hold.unconfirmedSince(result.brokeAt)) {
        // A resend found nothing (ExactlyOnce rule 5), and the hold had crossed a
        // reconnect unconfirmed: a restart that emptied Redis could have taken it before
        // this unlock, so it is told lost (the safe reading), not released.
        goneAtUnlock(engine, hold);
      }
      hold.finishRelease();
      // The head may be a wait of this client: handed over now, not after the message's trip.
      if (result.granted !== undefined) for (const message of result.granted) engine.waits.granted(message);
      return;
  }
}

/** An unlock found the hold gone from Redis: it is lost ('deleted'), and the unlock rejects with that. */
function goneAtUnlock(engine: ReleaseHost, hold: Hold): never {
  const lost = hold.lose('deleted');
  engine.holds.remove(hold);
  throw lost ?? new LockNotHeldError(hold.keys.name);
}

/** Gives back levels of an owner that Redis still counts after its last unlock. */
async function dropLevels(engine: ReleaseHost, hold: Hold, count: number, timeout: number): Promise<void> {
  const { keys, owner, primitive } = hold;
  try {
    for (let held = count; held > 0; held--) {
      const r = await primitive.release(keys, owner, held, timeout);
      if (r.kind !== 'decremented') return;
    }
  } catch (error) {
    engine.error(new LockError(`could not drop the leftover levels of '${keys.name}'; they expire with the lease`, { cause: error, lockName: keys.name }));
  }
}
