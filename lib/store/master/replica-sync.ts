import type { RedisClientPort } from '../client/redis-client.js';
import { final } from '../../errors/final.js';
import { LockError } from '../../errors/LockError.js';
import { ReplicaSyncError } from '../../errors/ReplicaSyncError.js';
import type { SyncReplicas } from '../../options.js';
import type { AcquireReply } from '../scripts/acquire.js';
import type { Followed, Script } from '../scripts/script.js';
import type { LockKeys } from '../types.js';
import { isMissingCommand } from '../missing-command.js';
import type { GiveBack } from './exactly-once.js';

type Arg = string | number;

/**
 * Replica safety (option `syncReplicas`): a write the client relies on (a grant, a
 * renewal) is followed on the same connection, in the same round trip, by `WAIT min
 * timeout`, and counts only when at least `min` replicas acknowledged it. A Sentinel
 * failover promotes the most up-to-date replica, so a lock whose grant `min >= 1`
 * replicas acknowledged is still there after it.
 *
 * Invariant: a grant that fewer than `min` replicas acknowledged (or whose WAIT failed)
 * is given back, once, before the acquisition fails; its give-back passes the levels
 * Redis counts with it (the client's + 1), so a resend of it, or rule 3 of
 * exactly-once.ts giving the same grant back again, drops nothing the owner holds.
 */
export class ReplicaSync {
  readonly min: number;
  /** WAIT's timeout (ms): it adds to the client-side bound of each call it follows. */
  readonly timeout: number;

  constructor(
    private readonly connection: RedisClientPort,
    options: Readonly<SyncReplicas>,
  ) {
    this.min = options.min;
    this.timeout = options.timeout;
  }

  /** The script, then WAIT on the same server connection: how many replicas acknowledged every write before it. */
  private followed<A extends readonly Arg[], R>(script: Script<A, R>, keys: readonly string[], args: A): Promise<Followed<R, number>> {
    return this.connection.pinned((c) => script.runFollowed(c, keys, args, () => c.wait(this.min, this.timeout)));
  }

  /**
   * An acquire script followed by WAIT. Granted with too few
   * acknowledgements: given back by `giveBack` (the primitive's, as its ExactlyOnce's;
   * `held` + 1 levels), then a ReplicaSyncError, which the
   * engine counts as a failed attempt. A refusal passes through whatever WAIT said: it
   * wrote nothing the client relies on.
   */
  async acquire<A extends readonly Arg[], P extends AcquireReply, K extends LockKeys>(
    script: Script<A, P>,
    keys: readonly string[],
    args: A,
    k: K,
    owner: string,
    held: number,
    timeout: number,
    giveBack: GiveBack<K>,
  ): Promise<P> {
    const { reply, after } = await this.followed(script, keys, args);
    if (!reply.granted) return reply;
    const error = this.shortfall('acquire', after, k.name);
    if (!error) return reply;
    await giveBack(k, owner, timeout, held + 1);
    throw error;
  }

  /** A renewal script followed by WAIT: its replies, or a ReplicaSyncError for the whole batch. */
  async renew<A extends readonly Arg[], R>(script: Script<A, R>, keys: readonly string[], args: A): Promise<R> {
    const { reply, after } = await this.followed(script, keys, args);
    const error = this.shortfall('renewal', after, undefined);
    if (error) throw error;
    return reply;
  }

  /**
   * Why the call does not count, if it does not. A server without WAIT (a managed service
   * that disables it) can never count one: a final LockError naming it, so that a wait
   * ends at once instead of retrying an answer that cannot change.
   */
  private shortfall(what: string, after: Followed<unknown, number>['after'], lockName: string | undefined): LockError | undefined {
    if (!after.ok && isMissingCommand(after.error)) {
      const named = lockName === undefined ? '' : ` '${lockName}'`;
      const reason = after.error instanceof Error ? after.error.message : String(after.error);
      return final(new LockError(`${what}${named}: option syncReplicas needs the WAIT command, which the server does not have (${reason}); run without syncReplicas there`, { cause: after.error, lockName }));
    }
    if (!after.ok) return new ReplicaSyncError(what, 0, this.min, this.timeout, { cause: after.error, lockName });
    if (after.value >= this.min) return undefined;
    return new ReplicaSyncError(what, after.value, this.min, this.timeout, { lockName });
  }
}
