import { LockError } from '../errors/LockError.js';
import type { Granted, Refused } from '../store/types.js';
import { SUBSCRIPTION_LINGER, backoff, retryIn, within } from './backoff.js';
import type { ListMembership } from './list-membership.js';
import type { WaitHost } from './request.js';
import type { WaitQueue, Waiter } from './wait-queue.js';

const now = () => performance.now();

/**
 * The one loop per key that waits on behalf of the queue's head until the queue has
 * been idle for SUBSCRIPTION_LINGER (a wake while the queue is idle, such as the
 * client's own release right before its next lock(), does not end that): subscribed to
 * the lock's channels, it retries on a release message, when the holder's TTL runs out,
 * or after a backoff when an attempt failed. `ended` runs when it stops (the queue is
 * dropped then).
 */
export async function pump(queue: WaitQueue, host: WaitHost, membership: ListMembership, ended: () => void): Promise<void> {
  const { keys } = queue;
  // The lock's channel carries releases to every waiter ('released': quorum mode, a
  // forced unlock); with a waiting list, releases that name this client come on its own.
  const own = host.store.waitingList?.channel(keys);
  queue.pumping = true;
  let failure: unknown;
  try {
    // Subscribe before the retry, so a release between the two is not missed; but a
    // subscription that does not come (Redis unreachable) holds retries up for one
    // command bound at most (the subscriber keeps trying on its own).
    const wake = (message: string) => message === 'released' && queue.wake();
    const entryLease = host.store.waitingList?.entryLease ?? 0;
    const subscribed = Promise.all([host.store.subscribe(keys.channel, wake), own && host.store.subscribe(own, (message) => named(queue, message, entryLease))]);
    subscribed.then(() => (queue.subscribed = queue.pumping), () => undefined);
    await within(subscribed, host.timeoutFor(queue.waiters[0]?.request.lease ?? 0));
    let lingerEnd: number | undefined;
    while (!host.closed) {
      if (queue.idle) {
        membership.leave(queue);
        lingerEnd ??= now() + SUBSCRIPTION_LINGER;
        const left = lingerEnd - now();
        if (left <= 0) break;
        await queue.sleep(left);
        continue;
      }
      lingerEnd = undefined;
      const head = queue.next();
      if (!head || host.heldByOther(keys.id, head.request.owner)) {
        // A hand-off is under way, or a local owner will hand the lock over: the
        // release, a loss or a leaving waiter wakes us.
        await queue.sleep(Infinity);
        continue;
      }
      if (head.retryAt !== undefined) {
        // Listed and waiting for its turn (its call's own attempt was refused while this
        // pump was subscribed, or a 'head:' notice came): a message naming it or its
        // retry time calls for the next attempt (as after a refused attempt of the pump's).
        const left = Math.min(head.retryAt, head.request.deadline) - now();
        head.retryAt = undefined;
        if (left > 0) {
          await queue.sleep(left);
          continue;
        }
      }
      await attempt(queue, head, host);
    }
  } catch (error) {
    failure = error;
    host.error(error);
  } finally {
    queue.pumping = false;
    queue.subscribed = false;
    membership.leave(queue);
    ended();
    if (!queue.idle) {
      // Closing: rejected once this client has left the waiting lists and dropped its
      // subscriptions (Engine.close).
      if (host.closed) await host.rejectingWaits;
      const reason = host.closed ? new LockError('client closed') : new LockError(`waiting for '${keys.name}' failed`, { cause: failure, lockName: keys.name });
      for (const waiter of [...queue.waiters]) waiter.reject(reason);
    }
    await Promise.all([host.store.unsubscribe(keys.channel).catch(() => undefined), own && host.store.unsubscribe(own).catch(() => undefined)]);
  }
}

/**
 * A message on this client's own channel of the lock: its turn ('<client id>': the pump
 * asks at once), or 'head:<ms>' (scripts/_waiting.lua tellHead): it heads the list
 * while the lock is held, and its turn comes in <ms>; the head waiter asks then, not
 * now (a message naming it still wakes it sooner), and within a third of its entry's
 * lease all the same (that ask keeps the entry alive).
 */
function named(queue: WaitQueue, message: string, entryLease: number): void {
  if (!message.startsWith('head:')) return queue.wake();
  // An attempt on its way learns its turn from its refusal: a wake now would only cut
  // the sleep that follows it short.
  const head = queue.waiters.find((w) => !w.settled);
  if (!head || head.claimed) return;
  const turnIn = Number(message.slice(5));
  head.retryAt = now() + Math.min(Number.isFinite(turnIn) ? turnIn : 0, entryLease / 3);
  queue.wake();
}

/** One attempt for the head, then the sleep its outcome calls for. */
async function attempt(queue: WaitQueue, head: Waiter, host: WaitHost): Promise<void> {
  const { request } = head;
  const list = host.store.waitingList;
  head.claimed = true;
  let result: Granted | Refused;
  try {
    result = await request.primitive.attempt(host.store, request.keys, request.owner, request.lease, host.levelsOf(request.keys.id, request.owner), host.timeoutFor(request.lease), true);
  } catch (error) {
    head.claimed = false;
    if (head.settled) return;
    failedAttempt(host, head, error);
    await queue.sleep(Math.min(backoff(head.failures), request.deadline - now()));
    return;
  }
  head.claimed = false;
  // A grant took this client off the list; a refusal put it on (or kept its place).
  queue.listed = list !== undefined && !result.granted;
  if (result.granted) {
    if (head.settled) return host.giveBack(request);
    try {
      head.resolve(host.grant(request, result));
    } catch (error) {
      // Read after its lease ran out (given back): a failed attempt like any other.
      failedAttempt(host, head, error);
      await queue.sleep(Math.min(backoff(head.failures), request.deadline - now()));
    }
    return;
  }
  if (head.settled) return;
  head.failures = 0;
  head.lastError = undefined;
  await queue.sleep(Math.min(retryIn(result, list?.entryLease), request.deadline - now()));
}

/** An attempt of the waiter's failed: the wait goes on, and ends with this error if it is the last. */
export function failedAttempt(host: WaitHost, waiter: Waiter, error: unknown): void {
  waiter.failures += 1;
  waiter.lastError = error;
  host.failed(waiter.request, error, waiter.failures);
}
