/**
 * The Store port in memory: one client's connection to a MemoryRedis, for the engine's
 * unit specs (no Redis, fake timers). With `queue` (the default) it carries the lock's
 * and the fair lock's Queue of one master (primitives/lock/queue.ts, scripts/_queue.lua),
 * which the harness builds its locks over, as the lock's folder does over MasterQueue;
 * without it, it is quorum-style: plain acquire/release, 'released' on keys.channel,
 * and its lock's waits are 'client' waits.
 *
 * Several clients of one lock are several MemoryStores over one MemoryRedis, each with
 * its own subscriptions and faults. A call's script runs at once (when it is sent) and
 * its reply comes back after the store's latency; its reply is decoded as MasterStore
 * decodes it (granted(): the client-side deadline from the send).
 *
 * Faults, each on this client only:
 * - dropMessages(n, match?): the next n matching messages to this client are lost;
 * - failNext(n, ...ops): the next n calls (of those ops, or any) reject, unapplied;
 * - latency / latencyOf(op, ms): replies come ms later (the script ran at the send);
 * - transitOf(op, ms): the call reaches the server ms after its send (the script runs
 *   then, other clients' calls meanwhile go first); its reply follows after its latency;
 * - cutSubscriptions() / restoreSubscriptions(): messages are lost until restored, and
 *   restoring tells every listener `undefined` (the subscriber reconnected: messages may
 *   have been lost), as MasterStore's subscriber does; breakSubscriptions() does both.
 */
import { granted } from '../../../lib/store/scripts/acquire';
import type { Queue } from '../../../lib/primitives/lock/queue';
import type { AcquireResult, LockKeys, LockState, ReleaseResult, RenewItem, RenewOutcome, Store } from '../../../lib/store/types';
import { safety } from '../../../lib/store/lease-margin';
import { queueKeys } from '../../../lib/store/name-keys';
import { MemoryRedis, type Subscriber } from './memory-redis';
import * as scripts from './memory-scripts';

export { MemoryRedis } from './memory-redis';

export type Op = 'acquire' | 'release' | 'queue.acquire' | 'queue.release' | 'queue.leave' | 'renew' | 'forceUnlock' | 'requestRelease' | 'isLocked' | 'holdCount' | 'pttl' | 'inspect' | 'subscribe' | 'unsubscribe';

/** One call this client made: when it was sent and answered (ms on the clock), and about whom. */
export interface Call {
  readonly op: Op;
  readonly owner?: string;
  readonly wait?: string;
  readonly sentAt: number;
  answeredAt?: number;
  /** 'ok', or the failure it rejected with. */
  outcome?: 'ok' | Error;
}

const RETENTION = 86_400_000;

export class MemoryStore implements Store, Subscriber {
  readonly size = 1;
  readonly queue?: Queue;
  /** Every call, in the order sent. */
  readonly calls: Call[] = [];
  /** Messages this client's listeners were handed (undefined: a broken subscription). */
  readonly received: { channel: string; message: string | undefined; at: number }[] = [];
  /** Messages that were lost on their way to this client. */
  readonly lost: { channel: string; message: string }[] = [];
  /** Reply delay of every call, in ms (0: the reply settles in the same turn of the event loop). */
  latency = 0;
  /** Delay of each message to this client, in ms. */
  messageDelay = 0;
  private readonly opLatency = new Map<Op, number>();
  private readonly opTransit = new Map<Op, number>();
  private readonly listeners = new Map<string, (message: string | undefined) => void>();
  private failures: { left: number; ops: readonly Op[] } | undefined;
  private drops: { left: number; match: (channel: string, message: string) => boolean } | undefined;
  private cut = false;
  private dropped = false;
  private closedNow = false;

  constructor(
    readonly redis: MemoryRedis,
    options: { queue?: boolean } = {},
  ) {
    redis.attach(this);
    if (options.queue === false) return;
    this.queue = {
      acquire: (k, owner, lease, heartbeat, wait, _timeout, _held) =>
        this.call('queue.acquire', { owner, wait }, (sentAt) => {
          const raw = scripts.queueAcquire(this.redis, this.context(k), owner, lease, heartbeat, wait ?? '', true);
          return acquireResult(raw, sentAt, lease);
        }),
      release: (k, owner, _timeout, held) => this.call('queue.release', { owner }, () => releaseResult(scripts.queueRelease(this.redis, this.context(k), owner, held, true))),
      leave: (k, owner, _timeout, wait) => this.call('queue.leave', { owner, wait }, () => scripts.queueLeave(this.redis, this.context(k), owner, wait)),
      forceUnlock: (k) => this.call('forceUnlock', {}, () => scripts.forceUnlock(this.redis, k.key, queueKeys(k.key).queue, k.channel, k.wakeChannel)),
      inspect: (k) => this.call('inspect', {}, () => this.state(k, queueKeys(k.key).queue)),
    };
  }

  // ---- faults ----------------------------------------------------------------------

  /** The next `count` calls (of `ops`, or any) reject without reaching the server. */
  failNext(count: number, ...ops: Op[]): void {
    this.failures = { left: count, ops };
  }

  /** The next `count` messages to this client that match are lost. */
  dropMessages(count = 1, match: (channel: string, message: string) => boolean = () => true): void {
    this.drops = { left: count, match };
  }

  /** Replies of `op` come `ms` later (overrides `latency`). */
  latencyOf(op: Op, ms: number): void {
    this.opLatency.set(op, ms);
  }

  /** Calls of `op` reach the server `ms` after their send: their script runs then. */
  transitOf(op: Op, ms: number): void {
    this.opTransit.set(op, ms);
  }

  /** This client's subscriber connection broke: messages to it are lost (the server no longer counts it). */
  cutSubscriptions(): void {
    this.cut = true;
  }

  /** It reconnected and resubscribed: every listener hears `undefined` (messages may have been lost). */
  restoreSubscriptions(): void {
    this.cut = false;
    for (const [channel, listener] of [...this.listeners]) {
      this.received.push({ channel, message: undefined, at: this.redis.clock() });
      listener(undefined);
    }
  }

  breakSubscriptions(): void {
    this.cutSubscriptions();
    this.restoreSubscriptions();
  }

  /** Calls of `op` (and of `owner`, when given). */
  callsOf(op: Op, owner?: string): Call[] {
    return this.calls.filter((c) => c.op === op && (owner === undefined || c.owner === owner));
  }

  get subscriptions(): string[] {
    return [...this.listeners.keys()];
  }

  get closed(): boolean {
    return this.closedNow;
  }

  // ---- Subscriber (the server's side) ----------------------------------------------

  listens(channel: string): boolean {
    return !this.cut && this.listeners.has(channel);
  }

  deliver(channel: string, message: string): void {
    const drops = this.drops;
    if (drops && drops.left > 0 && drops.match(channel, message)) {
      drops.left -= 1;
      this.lost.push({ channel, message });
      return;
    }
    const hand = () => {
      const listener = this.listeners.get(channel);
      if (!listener || this.cut) return void this.lost.push({ channel, message });
      this.received.push({ channel, message, at: this.redis.clock() });
      listener(message);
    };
    // Never within the publishing script: a message travels on another connection.
    if (this.messageDelay > 0) setTimeout(hand, this.messageDelay);
    else queueMicrotask(hand);
  }

  // ---- Store -----------------------------------------------------------------------

  acquire(k: LockKeys, owner: string, lease: number, _timeout: number, _held: number): Promise<AcquireResult> {
    return this.call('acquire', { owner }, (sentAt) => {
      // acquire.lua refuses with {0, pttl, counter}: no queue, so no head.
      const raw = scripts.acquire(this.redis, k.key, k.fence, owner, lease, RETENTION);
      return acquireResult(raw[0] === 1 ? raw : [0, raw[1], 0, raw[2]], sentAt, lease);
    });
  }

  release(k: LockKeys, owner: string, _timeout: number, held: number): Promise<ReleaseResult> {
    return this.call('release', { owner }, () => releaseResult(scripts.release(this.redis, k.key, owner, held)));
  }

  renew(items: readonly RenewItem[], _timeout: number): Promise<RenewOutcome[]> {
    return this.call('renew', {}, (sentAt) =>
      items.map((item): RenewOutcome => {
        const r = scripts.renew(this.redis, item.keys.key, item.owner, item.lease);
        if (r === 1) return { ok: true, validUntil: sentAt + item.lease - safety(item.lease) };
        return { ok: false, reason: r === 2 ? 'taken' : 'deleted' };
      }),
    );
  }

  forceUnlock(k: LockKeys, _timeout: number): Promise<boolean> {
    return this.call('forceUnlock', {}, () => scripts.forceUnlock(this.redis, k.key, undefined, k.channel, k.wakeChannel));
  }

  /** The holders, not told: the engine's holder channel is exercised against real servers. */
  requestRelease(k: LockKeys, _timeout: number): Promise<string[]> {
    return this.call('requestRelease', {}, () => this.redis.hgetall(k.key).map(([owner]) => owner));
  }

  isLocked(k: LockKeys, _timeout: number): Promise<boolean> {
    return this.call('isLocked', {}, () => this.redis.exists(k.key) === 1);
  }

  holdCount(k: LockKeys, owner: string, _timeout: number): Promise<number> {
    return this.call('holdCount', { owner }, () => Number(this.redis.hget(k.key, owner) ?? '0'));
  }

  pttl(k: LockKeys, _timeout: number): Promise<number> {
    return this.call('pttl', {}, () => this.redis.pttl(k.key));
  }

  inspect(k: LockKeys, _timeout: number): Promise<LockState> {
    return this.call('inspect', {}, () => this.state(k, undefined));
  }

  /** As inspect.lua reads a lock: `queue`, its queue (undefined: none, quorum mode). */
  private state(k: LockKeys, queue: string | undefined): LockState {
    const token = this.redis.get(k.fence);
    return {
      pttl: this.redis.pttl(k.key),
      token: token === undefined ? null : Number(token),
      queued: queue === undefined ? 0 : this.redis.llen(queue),
      holders: this.redis.hgetall(k.key).map(([owner, count]) => ({ owner, count: Number(count) })),
    };
  }

  subscribe(channel: string, listener: (message: string | undefined) => void): Promise<void> {
    // Dropped (closing): no new subscription is taken, and the call still resolves.
    return this.call('subscribe', {}, () => void (this.dropped || this.listeners.set(channel, listener)));
  }

  unsubscribe(channel: string): Promise<void> {
    return this.call('unsubscribe', {}, () => void this.listeners.delete(channel));
  }

  async dropSubscriptions(): Promise<void> {
    this.dropped = true;
    this.listeners.clear();
  }

  async close(): Promise<void> {
    this.closedNow = true;
    this.listeners.clear();
    this.redis.detach(this);
  }

  // ---- calls -----------------------------------------------------------------------

  /**
   * One call: refused by an injected failure (nothing applied), else applied once it
   * reaches the server (at once, or after its transit) and answered after its latency.
   */
  private call<T>(op: Op, who: { owner?: string; wait?: string }, run: (sentAt: number) => T): Promise<T> {
    const sentAt = this.redis.clock();
    const call: Call = { op, ...who, sentAt };
    this.calls.push(call);
    const answer = (outcome: 'ok' | Error) => {
      call.answeredAt = this.redis.clock();
      call.outcome = outcome;
    };
    const failures = this.failures;
    if (this.closedNow || (failures && failures.left > 0 && (failures.ops.length === 0 || failures.ops.includes(op)))) {
      if (!this.closedNow) failures!.left -= 1;
      const error = new Error(this.closedNow ? `memory store: ${op} after close` : `memory store: ${op} failed (injected)`);
      answer(error);
      return Promise.reject(error);
    }
    const reply = (value: T): Promise<T> => {
      const delay = this.opLatency.get(op) ?? this.latency;
      if (delay <= 0) {
        answer('ok');
        return Promise.resolve(value);
      }
      return new Promise((resolve) =>
        setTimeout(() => {
          answer('ok');
          resolve(value);
        }, delay),
      );
    };
    const transit = this.opTransit.get(op) ?? 0;
    if (transit <= 0) return reply(run(sentAt));
    return new Promise((resolve) => setTimeout(() => resolve(reply(run(sentAt))), transit));
  }

  private context(k: LockKeys): scripts.QueueContext {
    return { lock: k.key, fence: k.fence, ...queueKeys(k.key), channel: k.wakeChannel, retention: RETENTION };
  }
}

/** As the queue's scripts.ts decodes a reply, then granted() (lib/primitives/lock). */
function acquireResult(raw: number[], sentAt: number, lease: number): AcquireResult {
  if (raw[0] === 1) return granted(raw[2] === undefined ? { granted: true, token: raw[1] } : { granted: true, token: raw[1], pttl: raw[2] }, sentAt, lease);
  return granted({ granted: false, pttl: raw[1], head: raw[2] === 1, counter: raw[3] ?? 0 }, sentAt, lease);
}

/** As the release scripts' callers decode a reply. */
function releaseResult(raw: (number | string)[]): ReleaseResult {
  if (raw[0] === 0) return { kind: 'notHeld' };
  if (raw[0] === 1) return { kind: 'decremented', count: Number(raw[1]) };
  return raw[1] === undefined ? { kind: 'released' } : { kind: 'released', granted: [String(raw[1])] };
}
