import type { RedisClientPort } from '../../store/client/redis-client.js';
import { heldUntil } from '../../store/lease-margin.js';
import type { ExactlyOnce } from '../../store/master/exactly-once.js';
import type { ReplicaSync } from '../../store/master/replica-sync.js';
import type { AcquireReply, PublishVerb } from '../../store/scripts/acquire.js';
import type { AcquireResult, LockKeys, Queue, ReleaseResult } from '../../store/types.js';
import { identity, withTimeout } from '../../util/timeout.js';
import { queueAcquire, queueAcquireArgs, queueLeave, queueRelease, queueReleaseArgs } from './scripts.js';

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
}

/**
 * A grant's client-side deadline: the lease from the send, less the safety margin; a
 * grant made before the call (a release's, taken up by this attempt) counts only what
 * is left of its lease, so the deadline never falls after the key's expiry.
 * Exported for quorum mode's acquire and the in-memory store of the engine's unit specs.
 */
export function granted(reply: AcquireReply, sentAt: number, lease: number): AcquireResult {
  if (!reply.granted) return { granted: false, pttl: reply.pttl, counter: reply.counter, head: reply.head, windowLeft: reply.windowLeft };
  const left = reply.pttl === undefined || reply.pttl < 0 ? lease : reply.pttl;
  return { granted: true, token: reply.token, validUntil: heldUntil(sentAt, lease, left) };
}
