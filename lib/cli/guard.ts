// What `holdfast exec` holds while its command runs: the lock <name>, or with --limit N
// one permit of the semaphore <name> of N. Both through the library's public API.
import type { LockClient } from '../index.js';
import type { ExecOptions } from './args.js';
import { showHolder } from './show.js';
import { message, type Log } from './io.js';

/** A hold exec runs its command under. */
export interface Guarded {
  /** Aborts (with a LockLostError) when the hold is lost. */
  readonly signal: AbortSignal;
  /** What the command's environment gets besides HOLDFAST_LOCK. */
  readonly env: Readonly<Record<string, string>>;
  /** For messages: "token 12", "permit <id>". */
  readonly what: string;
  /** Rejects with the LockLostError after a loss, touching nothing in Redis. */
  release(): Promise<void>;
}

export interface Guard {
  /** Waits as acquire() does: rejects with LockTimeoutError when busy past waitTime. */
  take(options: { signal: AbortSignal; waitTime?: number }): Promise<Guarded>;
  /** Who keeps it busy, best effort (for the message only). */
  busy(): Promise<string>;
}

export function guardOf(locks: LockClient, o: ExecOptions, log: Log): Guard {
  const renewed = (e: { leaseTime: number }) => log.verbose(`renewed '${o.name}' (lease ${e.leaseTime} ms)`);
  const renewalFailed = (e: { attempt: number; error: Error }) => log.say(`warning: renewing '${o.name}' failed (attempt ${e.attempt}): ${message(e.error)}`);
  if (o.limit === undefined) {
    const lock = locks.getLock(o.name).on('renewed', renewed).on('renewalFailed', renewalFailed);
    return {
      take: async (options) => {
        const held = await lock.acquire(options);
        return { signal: held.signal, env: { HOLDFAST_TOKEN: String(held.token) }, what: `token ${held.token}`, release: () => held.release() };
      },
      busy: () =>
        lock.inspect().then(
          (info) => `held by ${info.holders.map(showHolder).join(', ') || 'another owner'}`,
          () => 'held by another owner',
        ),
    };
  }
  const limit = o.limit;
  const semaphore = locks.getSemaphore(o.name, limit).on('renewed', renewed).on('renewalFailed', renewalFailed);
  return {
    take: async (options) => {
      const permit = await semaphore.acquire(options);
      return { signal: permit.signal, env: { HOLDFAST_PERMIT: permit.id, HOLDFAST_LIMIT: String(limit) }, what: `permit ${permit.id} of ${limit}`, release: () => permit.release() };
    },
    busy: async () => `all ${limit} permits in use`,
  };
}
