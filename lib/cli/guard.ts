// What `holdfast exec` holds while its command runs: the lock <name>, or with --limit N
// one permit of the semaphore <name> of N. Both through the library's public API.
import { LockLostError, type LockClient, type LostEvent } from '../index.js';
import type { ExecOptions } from './args.js';
import { showHolder } from './show.js';
import { message, type Log } from './io.js';

/** A hold exec runs its command under. */
export interface Guarded {
  /** Aborts with a LockLostError when the hold is lost, or with a LockRevokedError when it is asked to let go (whichever comes first). */
  readonly signal: AbortSignal;
  /** The hold's loss, if it was lost: also after a request to let go, which the signal alone cannot tell. */
  lost(): LockLostError | undefined;
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
  // exec's client holds this one hold of the name: any loss of the name is its loss. The
  // hold's signal has aborted already when it was asked to let go first, so the loss is
  // kept here for the exit status (and said now: the command may still be stopping).
  let loss: LockLostError | undefined;
  const lost = (e: LostEvent) => {
    loss = e.error instanceof LockLostError ? e.error : new LockLostError(e.name, e.owner, e.reason, e.error);
    log.say(`${o.limit === undefined ? 'lock' : 'semaphore'} '${o.name}' was lost (${e.reason}) while its command was stopping on the request to let go`);
  };
  const lossOf = (signal: AbortSignal) => () => (signal.reason instanceof LockLostError ? signal.reason : loss);
  if (o.limit === undefined) {
    const lock = locks.getLock(o.name).on('renewed', renewed).on('renewalFailed', renewalFailed);
    return {
      take: async (options) => {
        const held = await lock.acquire(options);
        lock.on('lost', (e) => held.signal.reason instanceof LockLostError || lost(e));
        return { signal: held.signal, lost: lossOf(held.signal), env: { HOLDFAST_TOKEN: String(held.token) }, what: `token ${held.token}`, release: () => held.release() };
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
      semaphore.on('lost', (e) => permit.signal.reason instanceof LockLostError || lost(e));
      return { signal: permit.signal, lost: lossOf(permit.signal), env: { HOLDFAST_PERMIT: permit.id, HOLDFAST_LIMIT: String(limit) }, what: `permit ${permit.id} of ${limit}`, release: () => permit.release() };
    },
    busy: async () => `all ${limit} permits in use`,
  };
}
