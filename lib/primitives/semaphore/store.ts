import { CommandTimeoutError } from '../../errors/CommandTimeoutError.js';
import { final } from '../../errors/final.js';
import { LockError } from '../../errors/LockError.js';
import { identity, withTimeout } from '../../util/timeout.js';
import { heldUntil } from '../../store/lease-margin.js';
import { queueKeys } from '../../store/name-keys.js';
import { HOLDER_CHANNEL } from '../../store/scripts/release.js';
import { semAcquire, semAvailable, semForceRelease, semInspect, semLeave, semRelease, semRenew, semRequestRelease, type SemAcquireReply } from './scripts.js';
import type { AcquireResult, LockKeys, ReleaseResult, RenewScript } from '../../store/types.js';
import type { ExactlyOnce } from '../../store/master/exactly-once.js';
import type { MasterPort } from '../../store/master/port.js';

const now = () => performance.now();

/** The keys every semaphore script takes (sem, expiry, and the queue's of _semaphore.lua): one `{name}` hash tag, one slot. */
function semKeys({ key }: LockKeys): string[] {
  const q = queueKeys(key);
  return [key, `${key}:expiry`, q.queue, q.deadlines, q.tickets];
}

/** What MasterSemaphore.inspect reads: the limit Redis keeps (null: none), the waiters, each live acquisition's permits. */
export interface SemaphoreState {
  readonly limit: number | null;
  readonly queued: number;
  readonly permits: readonly { readonly id: string; readonly permits: number; readonly ttl: number }[];
}

/**
 * The semaphore on one master or a Cluster, over its MasterPort (built once per client
 * by semaphore.ts; not with syncReplicas: its grants are not followed by WAIT).
 * Permits are held by id (an owner id used once), under a lease; waiters queue in
 * Redis in arrival order, and a release grants the freed permits on, in arrival order,
 * to the waiters at the head that fit (their messages in `granted`).
 *
 * Applying each call once under resends (the rules of exactly-once.ts, as they hold
 * for permits): a permit's id is an owner id used for one acquisition only, and Redis
 * counts levels per id (grants of that id), so
 * - a resent or retried acquire of an id that already holds adds a level, never
 *   permits (sem-acquire.lua); a grant whose connection broke while it was out (the
 *   epoch moved) may have run twice: a release passing the client's levels + 2 drops
 *   the second level only if there is one (rule 2, without set-level.lua);
 * - a grant that failed with its connection is given back (rule 3), one that arrives
 *   after its call timed out too (rule 4), passing the client's levels + 1 so that a
 *   grant the client did register keeps its level;
 * - a release passes the levels the client holds and applies only when Redis has as
 *   many (rule 1); a last release answered "not held" after a reconnect was a resend
 *   of one that ran (rule 5: ExactlyOnce.release). Rule 6 as for the lock: a grant a
 *   release made to a waiter (its reply lost or late) stands as that wait's mark;
 * - an id's acquire is not sent while an earlier call of that id is out past its
 *   bound, or a give-back of it is out (rule 7): a grant given back after the next
 *   attempt's levels were settled would take a permit the client holds.
 */
export class MasterSemaphore {
  /** The watchdog's batch renewal of permits. */
  readonly renewal: RenewScript = { script: semRenew, arity: 5, keys: semKeys };
  private readonly once: ExactlyOnce;

  constructor(private readonly master: MasterPort) {
    this.once = master.exactlyOnce(this.giveBack);
  }

  /**
   * Takes `permits` of `limit` for id, in queue order, or takes up a grant a release
   * made to the wait `wait`, which joins (or heartbeats) the queue when not granted
   * (undefined: one attempt, never queued). Rejects with a final LockError when Redis
   * keeps another limit for the name.
   */
  async acquire(k: LockKeys, id: string, permits: number, limit: number, lease: number, heartbeat: number, wait: string | undefined, timeout: number): Promise<AcquireResult> {
    const earlier = this.once.settled(k, id, timeout);
    const left = earlier ? await earlier : timeout;
    const sentAt = now();
    const call = semAcquire.run(this.master.connection, semKeys(k), [id, permits, limit, lease, heartbeat, wait ?? '', k.wakeChannel, this.master.publish]);
    const reply = await this.grant(k, id, left, call);
    if (reply.granted) {
      // A grant a release made before this call counts only what is left of its lease.
      // Permits carry no fencing token (see semaphore.ts): 0 in events.
      return { granted: true, token: 0, validUntil: heldUntil(sentAt, lease, reply.pttl) };
    }
    if ('limit' in reply) throw mismatch(k.name, reply.limit, limit);
    // The stamp dates the refusal for a grant that comes in a message (engine/waits.ts).
    return { granted: false, pttl: reply.pttl, head: reply.head, counter: reply.stamp };
  }

  release(k: LockKeys, id: string, timeout: number, held: number): Promise<ReleaseResult> {
    const call = semRelease.run(this.master.connection, semKeys(k), [id, held, k.wakeChannel, this.master.publish]);
    return this.once.release(k, id, held, timeout, call, identity);
  }

  /** The wait `wait` gives up: id leaves the queue, and a grant made to that wait and never taken up is given back. */
  async leave(k: LockKeys, id: string, timeout: number, wait: string): Promise<void> {
    await withTimeout(semLeave.run(this.master.connection, semKeys(k), [id, wait, k.wakeChannel, this.master.publish]), timeout, 'leave the queue of', k.name);
  }

  /** Permits held now (leases not run out); rejects as acquire when the limits differ. */
  async held(k: LockKeys, limit: number, timeout: number): Promise<number> {
    const state = await withTimeout(semAvailable.run(this.master.connection, semKeys(k).slice(0, 2), []), timeout, 'availablePermits', k.name);
    if (state.limit !== null && state.limit !== limit) throw mismatch(k.name, state.limit, limit);
    return state.used;
  }

  /** Tells every holder of live permits to let go (engine/holder-channel.ts); changes nothing. The permit ids asked. */
  requestRelease(k: LockKeys, timeout: number): Promise<string[]> {
    return withTimeout(semRequestRelease.run(this.master.connection, semKeys(k).slice(0, 2), [HOLDER_CHANNEL, k.id]), timeout, 'requestRelease', k.name);
  }

  /** Deletes every permit held and tells their holders; waiters ask again. True when permits were held. */
  forceRelease(k: LockKeys, timeout: number): Promise<boolean> {
    return withTimeout(semForceRelease.run(this.master.connection, semKeys(k), [k.wakeChannel, this.master.publish, HOLDER_CHANNEL, k.id]), timeout, 'forceRelease', k.name);
  }

  /** The limit Redis keeps, the waiters and the live permits, whatever the caller's limit. */
  inspect(k: LockKeys, timeout: number): Promise<SemaphoreState> {
    return withTimeout(semInspect.run(this.master.connection, [k.key, `${k.key}:expiry`, queueKeys(k.key).queue], []), timeout, 'inspect', k.name);
  }

  /** Runs an acquire once (rules 2-4 above). */
  private async grant(k: LockKeys, id: string, timeout: number, call: Promise<SemAcquireReply>): Promise<SemAcquireReply> {
    const epoch = this.once.epoch;
    let reply: SemAcquireReply;
    try {
      reply = await withTimeout(call, timeout, 'acquire', k.name);
    } catch (error) {
      if (error instanceof CommandTimeoutError) this.once.unanswered(k, id, call, epoch);
      else if (this.once.epoch !== epoch) await this.giveBack(k, id, timeout, 1);
      throw error;
    }
    if (reply.granted && this.once.epoch !== epoch) await this.giveBack(k, id, timeout, this.master.levels.levelsOf(k.id, id) + 2);
    return reply;
  }

  private readonly giveBack = (k: LockKeys, id: string, timeout: number, levels: number): Promise<unknown> => this.release(k, id, timeout, levels).catch(() => undefined);
}

function mismatch(name: string, stored: number, asked: number): LockError {
  return final(
    new LockError(`semaphore '${name}' has a limit of ${stored} in Redis, but this client uses ${asked}: every client of one name must give the same limit`, { lockName: name }),
  );
}
