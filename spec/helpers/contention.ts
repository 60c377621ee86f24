import type { Lock } from '../../lib';
import { waitFor } from './wait';

/**
 * Runs `tasks` concurrent loops that each enter a critical section `rounds` times
 * through `enter`; reports the most tasks ever seen inside at once (1 = exclusion held)
 * and how many sections completed.
 */
export async function contend(tasks: number, rounds: number, enter: (task: number, body: () => Promise<void>) => Promise<unknown>): Promise<{ maxInside: number; sections: number }> {
  let inside = 0;
  let maxInside = 0;
  let sections = 0;
  const body = async () => {
    inside += 1;
    maxInside = Math.max(maxInside, inside);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 1));
    inside -= 1;
    sections += 1;
  };
  await Promise.all(
    Array.from({ length: tasks }, async (_, task) => {
      for (let i = 0; i < rounds; i++) await enter(task, body);
    }),
  );
  return { maxInside, sections };
}

/**
 * Holder (another client) holds with a long lease while `waiter` waits; once the wait
 * is subscribed (`subscribed()`), the holder unlocks. Resolves with the ms from the
 * release to the waiter's grant; the waiter still holds the lock afterwards.
 */
export async function wakeDelay(holder: Lock, waiter: Lock, subscribed: () => Promise<boolean>): Promise<number> {
  await holder.lock(20_000);
  const pending = waiter.tryLock(10_000).then((ok) => ok && performance.now());
  await waitFor(subscribed, { message: 'waiter subscribed' });
  const releasedAt = performance.now();
  await holder.unlock();
  const at = await pending;
  if (at === false) throw new Error('the waiter never got the lock');
  return at - releasedAt;
}

/**
 * Each lock in its own loop takes, holds for one turn of the event loop, and releases,
 * until every loop has had `each` sections or `withinMs` has passed. Resolves with the
 * sections per loop. With one lock per client, every release is followed at once by
 * that client's next lock(): a busy lock its clients keep coming back to.
 */
export async function takeTurns(locks: Pick<Lock, 'lock' | 'unlock'>[], each: number, withinMs = 5_000): Promise<number[]> {
  const sections = locks.map(() => 0);
  const until = performance.now() + withinMs;
  await Promise.all(
    locks.map(async (lock, i) => {
      while (Math.min(...sections) < each && performance.now() < until) {
        await lock.lock();
        sections[i] += 1;
        await new Promise((resolve) => setImmediate(resolve));
        await lock.unlock();
      }
    }),
  );
  return sections;
}
