import type { ExactlyOnce } from '../../store/master/exactly-once.js';
import type { MasterPort } from '../../store/master/port.js';
import { SCRIPT_RETENTION, granted, type AcquireReply } from '../../store/scripts/acquire.js';
import type { ReleaseReply } from '../../store/scripts/release.js';
import { queueKeys } from '../../store/name-keys.js';
import type { AcquireResult, LockKeys, LockState, ReleaseResult } from '../../store/types.js';
import { forceUnlock, HOLDER_CHANNEL } from '../../store/scripts/release.js';
import { inspect } from '../../store/scripts/maintain.js';
import { identity, withTimeout } from '../../util/timeout.js';
import { queueAcquire, queueAcquireArgs, queueLeave, queueRelease, queueReleaseArgs } from './scripts.js';
import { multiRelease, multiTake } from '../multi/scripts.js';
import { clusterSlot } from '../../store/master/slot.js';

const now = () => performance.now();

/**
 * The lock's and the fair lock's calls in Redis with their waiting queue (one master or
 * a Cluster; scripts/_queue.lua).
 * The engine's unit specs put an in-memory one in its place.
 */
export interface Queue {
  /**
   * An attempt. `wait`: the id of the wait making it, which joins (or heartbeats) the
   * queue when not granted; a release may then grant the lock to that wait directly
   * (its message on the client's channel). undefined: one attempt, never queued.
   */
  acquire(keys: LockKeys, owner: string, lease: number, heartbeat: number, wait: string | undefined, timeout: number, held: number): Promise<AcquireResult>;
  release(keys: LockKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult>;
  /** The wait `wait` gives up: owner leaves the queue, and a grant made to that wait and never claimed is given back. */
  leave(keys: LockKeys, owner: string, timeout: number, wait: string): Promise<void>;
  /** Deletes the lock whoever holds it (as the store's forceUnlock), and wakes its queue to ask again. */
  forceUnlock(keys: LockKeys, timeout: number): Promise<boolean>;
  /** What inspect() reads: the store's, with the queue's length. */
  inspect(keys: LockKeys, timeout: number): Promise<LockState>;
  /**
   * A multi-lock's names in one script call (one master, or one Cluster slot), all or
   * none: each result is a grant when every name was free with nobody queued, a refusal
   * for all otherwise (nothing taken, nothing queued). undefined when the names cannot go
   * in one call (different slots, syncReplicas, an earlier call of owner's on a name
   * still unsettled): the caller takes them one at a time.
   */
  acquireAll?(keys: readonly LockKeys[], owner: string, lease: number, timeout: number): Promise<AcquireResult>[] | undefined;
  /**
   * The last level of owner's hold of each name, in one script call where the names can
   * share one (else undefined); a name with waiters goes on to release() (which grants
   * its head) once that call has answered. One result per name, as release() answers.
   */
  releaseAll?(keys: readonly LockKeys[], owner: string, timeout: number): Promise<ReleaseResult>[] | undefined;
}

/**
 * The waiting queue in Redis of the lock and the fair lock on one master or a Cluster
 * (queue-*.lua over the shared prelude _queue.lua): an attempt that is refused joins
 * it, a release grants the head in the same script, a leave gives back a grant not
 * taken up. One per client (locks.ts): the lock, the fair lock and a multi-lock's names
 * share the lock hash, so one ExactlyOnce orders an owner's calls on it whichever handle
 * made them.
 */
export class MasterQueue implements Queue {
  /** Each call applied once whatever the connection does; a grant goes back through release() (the head is granted next). */
  private readonly once: ExactlyOnce;

  constructor(private readonly master: MasterPort) {
    this.once = master.exactlyOnce(this.giveBack);
  }

  private readonly giveBack = (k: LockKeys, owner: string, timeout: number, levels: number): Promise<unknown> => this.release(k, owner, timeout, levels).catch(() => undefined);

  acquire(k: LockKeys, owner: string, lease: number, heartbeat: number, wait: string | undefined, timeout: number, held: number): Promise<AcquireResult> {
    const { connection, sync } = this.master;
    const once = this.once;
    let sentAt = 0;
    const q = queueKeys(k.key);
    const keys = [k.key, k.fence, q.queue, q.deadlines, q.tickets];
    // With syncReplicas the head is woken to ask: its grant must be followed by WAIT, which only its own call can send.
    const args = queueAcquireArgs(owner, lease, wait ?? '', heartbeat, this.master.keyRetention, this.master.publish, !sync);
    const send = () => {
      sentAt = now();
      return sync ? sync.acquire(queueAcquire, keys, args, k, owner, held, timeout, this.giveBack) : queueAcquire.run(connection, keys, args);
    };
    return once.grant(k, owner, held, timeout + (sync?.timeout ?? 0), send, (reply) => granted(reply, sentAt, lease));
  }

  release(k: LockKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult> {
    const { connection, sync } = this.master;
    const q = queueKeys(k.key);
    const call = queueRelease.run(connection, [k.key, q.queue, q.deadlines, k.fence, q.tickets], queueReleaseArgs(owner, held, this.master.keyRetention, this.master.publish, !sync));
    return this.once.release(k, owner, held, timeout, call, identity);
  }

  leave(k: LockKeys, owner: string, timeout: number, wait: string): Promise<void> {
    const q = queueKeys(k.key);
    return withTimeout(queueLeave.run(this.master.connection, [k.key, q.queue, q.deadlines, q.tickets], [owner, wait, this.master.publish]), timeout, 'leave the queue of', k.name);
  }

  forceUnlock(k: LockKeys, timeout: number): Promise<boolean> {
    const { connection, publish } = this.master;
    return withTimeout(forceUnlock.run(connection, [k.key, queueKeys(k.key).queue], [k.channel, publish, HOLDER_CHANNEL, k.id, k.wakeChannel]), timeout, 'forceUnlock', k.name);
  }

  inspect(k: LockKeys, timeout: number): Promise<LockState> {
    return withTimeout(inspect.run(this.master.connection, [k.key, k.fence, queueKeys(k.key).queue], []), timeout, 'inspect', k.name);
  }

  /**
   * All names or none in one call (multi-take.lua). Each name's grant still goes through
   * exactly-once.ts as a call of its own would (its bound, a reconnect while it was out,
   * a late reply): the one reply is shared, the rules are per name. Taken only when no
   * earlier call of owner's on any name is unsettled (rule 7 would hold that name's
   * attempt back, and the names would no longer go together).
   */
  acquireAll(keys: readonly LockKeys[], owner: string, lease: number, timeout: number): Promise<AcquireResult>[] | undefined {
    const { connection, sync, keyRetention } = this.master;
    const once = this.once;
    // With syncReplicas each grant is followed by WAIT, per name (replica-sync.ts).
    if (sync || !this.oneCall(keys) || !keys.every((k) => once.clear(k, owner))) return undefined;
    const args = keyRetention === SCRIPT_RETENTION ? [owner, lease] : [owner, lease, keyRetention];
    const sentAt = now();
    const call = multiTake.run(
      connection,
      keys.flatMap((k) => {
        const q = queueKeys(k.key);
        return [k.key, k.fence, q.queue, q.tickets];
      }),
      args,
    );
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
  releaseAll(keys: readonly LockKeys[], owner: string, timeout: number): Promise<ReleaseResult>[] | undefined {
    const { connection } = this.master;
    const once = this.once;
    if (!this.oneCall(keys)) return undefined;
    const call = multiRelease.run(
      connection,
      keys.flatMap((k) => {
        const q = queueKeys(k.key);
        return [k.key, q.queue, q.tickets];
      }),
      [owner],
    );
    return keys.map((k, i) =>
      once.release(
        k,
        owner,
        1,
        timeout,
        call.then((done): ReleaseReply | Promise<ReleaseReply> => (done[i] === 'queued' ? this.release(k, owner, timeout, 1) : done[i] === 'released' ? RELEASED : NOT_HELD)),
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
const REFUSED: AcquireReply = Object.freeze({ granted: false, pttl: -1, counter: 0, head: false });
const RELEASED: ReleaseReply = Object.freeze({ kind: 'released' });
const NOT_HELD: ReleaseReply = Object.freeze({ kind: 'notHeld' });
