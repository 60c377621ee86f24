import type { RedisClientPort } from '../../store/client/redis-client.js';
import type { ExactlyOnce } from '../../store/master/exactly-once.js';
import type { ReplicaSync } from '../../store/master/replica-sync.js';
import { SCRIPT_RETENTION, granted, type AcquireReply, type PublishVerb } from '../../store/scripts/acquire.js';
import type { ReleaseReply } from '../../store/scripts/release.js';
import type { AcquireResult, LockKeys, Queue, ReleaseResult } from '../../store/types.js';
import { identity, withTimeout } from '../../util/timeout.js';
import { queueAcquire, queueAcquireArgs, queueLeave, queueRelease, queueReleaseArgs } from './scripts.js';
import { multiRelease, multiTake } from '../multi/scripts.js';
import { clusterSlot } from '../../store/master/slot.js';

const now = () => performance.now();

/** What the queue needs of its master (store/master/master.ts): the connection and the rules every call there keeps. */
export interface QueueMaster {
  readonly connection: RedisClientPort;
  /** Each call applied once whatever the connection does (exactly-once.ts). */
  readonly once: ExactlyOnce;
  /** Option syncReplicas: WAIT behind every grant (replica-sync.ts). */
  readonly sync: ReplicaSync | undefined;
  readonly publish: PublishVerb;
  readonly keyRetention: number;
  /** Told each acquisition's round trip (ms). */
  tookRoundTrip(ms: number): void;
}

/**
 * The waiting queue in Redis of the lock and the fair lock on one master or a Cluster
 * (queue-*.lua over the shared prelude _queue.lua): an attempt that is refused joins
 * it, a release grants the head in the same script (after the barging window:
 * plain.ts), a leave gives back a grant not taken up.
 */
export class MasterQueue implements Queue {
  constructor(private readonly master: QueueMaster) {}

  acquire(k: LockKeys, owner: string, lease: number, heartbeat: number, wait: string | undefined, window: number, timeout: number, held: number): Promise<AcquireResult> {
    const { connection, once, sync } = this.master;
    let sentAt = 0;
    const keys = [k.key, k.fence, k.queue, k.deadlines, k.tickets];
    // With syncReplicas the head is woken to ask: its grant must be followed by WAIT, which only its own call can send.
    const args = queueAcquireArgs(owner, lease, wait ?? '', window, heartbeat, this.master.keyRetention, this.master.publish, !sync);
    const send = () => {
      sentAt = now();
      return sync ? sync.acquire(queueAcquire, keys, args, k, owner, held, timeout) : queueAcquire.run(connection, keys, args);
    };
    return once.grant(k, owner, held, timeout + (sync?.timeout ?? 0), send, (reply) => {
      this.master.tookRoundTrip(now() - sentAt);
      return granted(reply, sentAt, lease);
    });
  }

  release(k: LockKeys, owner: string, timeout: number, held: number, window: number): Promise<ReleaseResult> {
    const { connection, once, sync } = this.master;
    const call = queueRelease.run(connection, [k.key, k.queue, k.deadlines, k.fence, k.tickets], queueReleaseArgs(owner, held, window, this.master.keyRetention, this.master.publish, !sync));
    return once.release(k, owner, held, timeout, call, identity);
  }

  leave(k: LockKeys, owner: string, timeout: number, wait: string, window: number): Promise<void> {
    return withTimeout(queueLeave.run(this.master.connection, [k.key, k.queue, k.deadlines, k.tickets], [owner, wait, window, this.master.publish]), timeout, 'leave the queue of', k.name);
  }

  /**
   * All names or none in one call (multi-take.lua). Each name's grant still goes through
   * exactly-once.ts as a call of its own would (its bound, a reconnect while it was out,
   * a late reply): the one reply is shared, the rules are per name. Taken only when no
   * earlier call of owner's on any name is unsettled (rule 7 would hold that name's
   * attempt back, and the names would no longer go together).
   */
  acquireAll(keys: readonly LockKeys[], owner: string, lease: number, timeout: number): Promise<AcquireResult>[] | undefined {
    const { connection, once, sync, keyRetention } = this.master;
    // With syncReplicas each grant is followed by WAIT, per name (replica-sync.ts).
    if (sync || !this.oneCall(keys) || !keys.every((k) => once.clear(k, owner))) return undefined;
    const args = keyRetention === SCRIPT_RETENTION ? [owner, lease] : [owner, lease, keyRetention];
    const sentAt = now();
    const call = multiTake.run(connection, keys.flatMap((k) => [k.key, k.fence, k.queue, k.tickets]), args);
    call.then(() => this.master.tookRoundTrip(now() - sentAt), () => undefined);
    return keys.map((k, i) =>
      once.grant(
        k,
        owner,
        0,
        timeout,
        () => call.then((tokens): AcquireReply => (tokens ? { granted: true, token: tokens[i] } : REFUSED)),
        (reply) => granted(reply, sentAt, lease),
      ),
    );
  }

  /** The last level of each name in one call (multi-release.lua); a name with waiters then goes through release(). */
  releaseAll(keys: readonly LockKeys[], owner: string, timeout: number, window: number): Promise<ReleaseResult>[] | undefined {
    const { connection, once } = this.master;
    if (!this.oneCall(keys)) return undefined;
    const call = multiRelease.run(connection, keys.flatMap((k) => [k.key, k.queue, k.tickets]), [owner]);
    return keys.map((k, i) =>
      once.release(
        k,
        owner,
        1,
        timeout,
        call.then((done): ReleaseReply | Promise<ReleaseReply> => (done[i] === 'queued' ? this.release(k, owner, timeout, 1, window) : done[i] === 'released' ? RELEASED : NOT_HELD)),
        identity,
      ),
    );
  }

  /** One script may touch the names: always on one master; in a Cluster, when they share a slot. */
  private oneCall(keys: readonly LockKeys[]): boolean {
    if (!this.master.connection.isCluster) return true;
    const slot = clusterSlot(keys[0].key);
    return keys.every((k) => clusterSlot(k.key) === slot);
  }
}

/** multi-take.lua took nothing (details of a refusal are not needed: the names are then taken one at a time). */
const REFUSED: AcquireReply = Object.freeze({ granted: false, pttl: -1, counter: 0, head: false, windowLeft: 0 });
const RELEASED: ReleaseReply = Object.freeze({ kind: 'released', receivers: 0 });
const NOT_HELD: ReleaseReply = Object.freeze({ kind: 'notHeld' });
