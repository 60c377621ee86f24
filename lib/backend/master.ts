import type { Redis } from 'ioredis';
import type { Connection } from '../connection.js';
import { isCluster } from '../connection.js';
import { scripts } from '../scripts.js';
import { Subscriber } from '../subscriber.js';
import { withTimeout, CommandTimeoutError } from '../timeout.js';
import { clusterSlot } from './slot.js';
import { RestartWatch } from './restarts.js';
import type { AcquireResult, Backend, LockKeys, NextOwner, ReleaseResult, RenewItem, RenewOutcome } from './types.js';

/** Holds per renewal script call: big enough to make 10 000 holds a handful of calls, small enough not to block Redis. */
const RENEW_CHUNK = 500;

const now = () => performance.now();

/**
 * Room for this process's timers to fire late (a busy event loop): the deadline tick
 * that reports `lost` must still run before the server's TTL lets someone else in.
 * Quorum chaos runs on a loaded 2-core machine saw ticks 100+ ms late at lease 800 ms.
 */
export const lagAllowance = (lease: number) => Math.min(50, Math.floor(lease / 10));

/**
 * The client's deadline for a hold ends a little before the server's TTL: the server
 * starts its timer after our send, never before; the margin covers clock drift (1%)
 * and late timers, so `lost` fires before the key can expire for someone else.
 */
export const safety = (lease: number) => Math.floor(lease * 0.01) + 2 + lagAllowance(lease);

/** One Redis master, or an ioredis Cluster (scripts touch one slot each, so ioredis routes them). */
export class Master implements Backend {
  readonly size = 1;
  private readonly subscriber: Subscriber;
  private readonly publish: 'publish' | 'spublish';
  private readonly cluster: boolean;
  private wasReady: boolean;
  private readonly onReady = () => {
    this.wasReady = true;
  };
  private readonly onClose = () => {
    this.epoch += 1;
  };

  /** A Cluster's node connections close on their own: the Cluster object says nothing. */
  private readonly onNode = (node: Redis) => node.on('close', this.onClose);

  /**
   * Counts the connection's closes (a Cluster's: any node connection's). A reply to a
   * command sent in an earlier epoch may come from a second run of it: ioredis resends
   * unfulfilled commands after it reconnects (autoResendUnfulfilledCommands; a Cluster
   * retries them on another connection), to a master that may have restarted empty.
   */
  epoch = 0;

  /**
   * @param levelsNow how many levels the client holds now for owner of the lock at key
   *   (0 for none): a give-back passes these plus one, so its resend takes nothing more.
   */
  constructor(
    readonly connection: Connection,
    readonly levelsNow: (key: string, owner: string) => number,
  ) {
    this.cluster = isCluster(connection);
    this.publish = this.cluster ? 'spublish' : 'publish';
    this.subscriber = new Subscriber(connection);
    this.wasReady = connection.status === 'ready';
    connection.on('ready', this.onReady);
    connection.on('close', this.onClose);
    if (isCluster(connection)) {
      for (const node of connection.nodes('all')) this.onNode(node);
      connection.on('+node', this.onNode);
    }
  }

  /**
   * True while the connection is not ready after having been: a command would only sit
   * in ioredis's offline queue, so quorum mode counts the master out at once. Also while
   * 'connect'ing again: a command queued then would reach a restarted server before
   * the restart check ('ready', then INFO) could keep it out of the vote.
   */
  get down(): boolean {
    const s = this.connection.status;
    if (s === 'ready') return false;
    if (s === 'end' || s === 'close' || s === 'reconnecting') return true;
    // 'connecting' is also a first connection; after a failure ioredis counts retries.
    return this.wasReady || ((this.connection as unknown as { retryAttempts?: number }).retryAttempts ?? 0) > 0;
  }

  /** Smoothed round trip of acquire calls (ms): sizes the no-barging window. */
  rtt = 1;

  /** Quorum mode: set by watchRestarts(). */
  restarts: RestartWatch | undefined;

  /** Quorum mode: after a restart this master sits out votes for `sitOut` ms (see RestartWatch). */
  watchRestarts(sitOut: number): void {
    this.restarts ??= new RestartWatch(this.connection, sitOut);
  }

  async acquire(k: LockKeys, owner: string, lease: number, timeout: number, held: number): Promise<AcquireResult> {
    const sentAt = now();
    const reply = await this.grantCall(k, owner, held, timeout, false, () => scripts.acquire.run(this.connection, [k.key, k.fence], [owner, lease]));
    this.rtt = this.rtt * 0.8 + (now() - sentAt) * 0.2;
    if (reply[0] !== 1) return { granted: false, pttl: Number(reply[1]), counter: Number(reply[2] ?? 0) };
    return { granted: true, token: Number(reply[1]), validUntil: sentAt + lease - safety(lease) };
  }

  /**
   * Runs an acquire script (plain or fair) so that it counts once whatever the
   * connection does: a grant that crossed a reconnect has its level settled; a call
   * that timed out has a late grant given back; a call that failed with its connection,
   * maybe after the server ran it, is given back (a new hold) or set back (a reentry),
   * or a retry by the same owner would reenter a level nobody unlocks.
   */
  private async grantCall(k: LockKeys, owner: string, held: number, timeout: number, fair: boolean, run: () => Promise<unknown>): Promise<number[]> {
    const epoch = this.epoch;
    const call = run() as Promise<number[]>;
    let reply: number[];
    try {
      reply = await withTimeout(call, timeout, 'acquire', k.name);
    } catch (error) {
      if (error instanceof CommandTimeoutError) {
        call.then(
          (late) => void (late[0] === 1 && this.giveBack(k, owner, fair, 5_000, this.levelsNow(k.key, owner) + 1)),
          () => undefined,
        );
      } else if (this.epoch !== epoch) {
        if (held === 0) await this.giveBack(k, owner, fair, timeout, 1);
        else await this.settleLevel(k, owner, held, timeout);
      }
      throw error;
    }
    if (reply[0] === 1 && this.epoch !== epoch) await this.settleLevel(k, owner, held + 1, timeout);
    return reply;
  }

  /**
   * Drops one level of owner's, best effort: a grant nobody will use. `levels` is what
   * Redis counts with that grant (the client's levels + 1): a resend of the give-back
   * (its reply lost) then finds fewer and drops nothing. Given 1 for a reentry, the
   * resend would take a level the owner holds and free the lock under it.
   */
  giveBack(k: LockKeys, owner: string, fair: boolean, timeout: number, levels: number): Promise<unknown> {
    return (fair ? this.fairRelease(k, owner, timeout, levels) : this.release(k, owner, undefined, timeout, levels)).catch(() => undefined);
  }

  /**
   * A grant that crossed a reconnect may have been carried out twice (ioredis resends
   * what went unanswered), leaving a level nobody will unlock: the lock would outlive
   * its last unlock, renewed for good. Set the level to what the client holds. Not done
   * in the script by comparing levels: a retry by the same owner while its previous
   * attempt's grant is being given back looks just like a resend there.
   */
  private async settleLevel(k: LockKeys, owner: string, level: number, timeout: number): Promise<void> {
    // The connection may break again meanwhile (a Cluster rejects rather than resends
    // then): the call is idempotent, so try until it is answered or time runs out.
    const until = now() + timeout;
    for (;;) {
      const left = until - now();
      if (left <= 0) return;
      const done = await withTimeout(scripts.setLevel.run(this.connection, [k.key], [owner, level]), left, 'acquire', k.name).then(
        () => true,
        () => false,
      );
      if (done) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  release(k: LockKeys, owner: string, next: NextOwner | undefined, timeout: number, held: number): Promise<ReleaseResult> {
    const sentAt = now();
    const epoch = this.epoch;
    const call = scripts.release.run(this.connection, [k.key, k.fence], [owner, k.channel, this.publish, next?.owner ?? '', next?.lease ?? 0, next?.unlessOthersWait ?? '', held]) as Promise<number[]>;
    return withTimeout(call, timeout, 'release', k.name).then(
      async (reply) => {
        const resent = this.resentRelease(reply, epoch, held);
        // Its first run may have handed the lock to `next`, whom the client now treats
        // as still waiting.
        if (resent !== reply && next) await this.takeBack(k, next, timeout);
        return this.releaseResult(resent, sentAt, next);
      },
      async (error: unknown) => {
        if (next) {
          // Timed out: the hand-off may still happen, and the waiter it named has moved on.
          if (error instanceof CommandTimeoutError) void call.then((reply) => reply[0] === 3 && this.takeBack(k, next, 5_000), () => undefined);
          // Failed with its connection (a Cluster gives up rather than resending), maybe
          // after the server ran it: taken back before the waiter retries on its own.
          else await this.takeBack(k, next, timeout);
        }
        throw error;
      },
    );
  }

  /**
   * Gives back a hand-off a release may have made to `next` without the client knowing:
   * next's own retry would reenter it as a level nobody unlocks (the lock outliving its unlock).
   */
  private takeBack(k: LockKeys, next: NextOwner, timeout: number): Promise<unknown> {
    return this.giveBack(k, next.owner, false, timeout, this.levelsNow(k.key, next.owner) + 1);
  }

  /**
   * A last-level release answered "not held" after the connection broke may be ioredis's
   * resend of a release that already ran (and deleted the key, or handed it off): the
   * hold is over either way, so it counts as released, not as a loss.
   */
  private resentRelease(reply: number[], epoch: number, held: number): number[] {
    return reply[0] === 0 && held === 1 && this.epoch !== epoch ? [2, 0] : reply;
  }

  private releaseResult(reply: number[], sentAt: number, next: NextOwner | undefined): ReleaseResult {
    switch (reply[0]) {
      case 0:
        return { kind: 'notHeld' };
      case 1:
        return { kind: 'decremented', count: Number(reply[1]) };
      case 3:
        return { kind: 'handedOff', token: Number(reply[1]), validUntil: sentAt + (next?.lease ?? 0) - safety(next?.lease ?? 0) };
      default:
        return { kind: 'released', receivers: Number(reply[1] ?? 0) };
    }
  }

  async renew(items: readonly RenewItem[], timeout: number): Promise<RenewOutcome[]> {
    const sentAt = now();
    const outcomes: RenewOutcome[] = new Array(items.length);
    const calls: Promise<void>[] = [];
    for (const group of this.groups(items)) {
      for (let start = 0; start < group.length; start += RENEW_CHUNK) {
        const chunk = group.slice(start, start + RENEW_CHUNK);
        const keys = chunk.map((i) => items[i].keys.key);
        const args: (string | number)[] = [];
        for (const i of chunk) args.push(items[i].owner, items[i].lease);
        calls.push(
          withTimeout(scripts.renew.run(this.connection, keys, args) as Promise<number[]>, timeout, 'renewal').then(
            (reply) => {
              chunk.forEach((i, j) => {
                const r = Number(reply[j]);
                outcomes[i] = r === 1 ? { ok: true, validUntil: sentAt + items[i].lease - safety(items[i].lease) } : { ok: false, reason: r === 2 ? 'taken' : 'deleted' };
              });
            },
            (error: Error) => {
              for (const i of chunk) outcomes[i] = { ok: false, error };
            },
          ),
        );
      }
    }
    await Promise.all(calls);
    return outcomes;
  }

  /** Indexes of items, grouped so that each group's keys share a cluster slot (one group on a plain master). */
  private groups(items: readonly RenewItem[]): number[][] {
    if (!this.cluster) return [items.map((_, i) => i)];
    const bySlot = new Map<number, number[]>();
    items.forEach((item, i) => {
      const slot = clusterSlot(item.keys.key);
      const group = bySlot.get(slot);
      if (group) group.push(i);
      else bySlot.set(slot, [i]);
    });
    return [...bySlot.values()];
  }

  async forceUnlock(k: LockKeys, timeout: number): Promise<boolean> {
    const reply = await withTimeout(scripts.forceUnlock.run(this.connection, [k.key], [k.channel, this.publish]), timeout, 'forceUnlock', k.name);
    return Number(reply) === 1;
  }

  async isLocked(k: LockKeys, timeout: number): Promise<boolean> {
    return (await withTimeout(this.connection.exists(k.key), timeout, 'isLocked', k.name)) === 1;
  }

  async holdCount(k: LockKeys, owner: string, timeout: number): Promise<number> {
    const v = await withTimeout(this.connection.hget(k.key, owner), timeout, 'getHoldCount', k.name);
    return v === null ? 0 : Number(v);
  }

  async pttl(k: LockKeys, timeout: number): Promise<number> {
    return withTimeout(this.connection.pttl(k.key), timeout, 'remainTimeToLive', k.name);
  }

  async fenceFloor(k: LockKeys, floor: number, timeout: number): Promise<void> {
    await withTimeout(scripts.fenceFloor.run(this.connection, [k.fence], [floor]), timeout, 'fence floor', k.name);
  }

  subscribe(channel: string, listener: (message: string) => void): Promise<void> {
    return this.subscriber.subscribe(channel, listener, 2_000);
  }

  unsubscribe(channel: string): Promise<void> {
    return this.subscriber.unsubscribe(channel, 2_000);
  }

  async fairAcquire(k: LockKeys, owner: string, lease: number, heartbeat: number, enqueue: boolean, timeout: number, held: number): Promise<AcquireResult & { head?: boolean }> {
    const sentAt = now();
    const reply = await this.grantCall(k, owner, held, timeout, true, () =>
      scripts.fairAcquire.run(this.connection, [k.key, k.fence, k.queue, k.deadlines], [owner, lease, heartbeat, enqueue ? '1' : '0', k.fairChannel, this.publish]),
    );
    if (reply[0] !== 1) return { granted: false, pttl: Number(reply[1]), head: reply[2] === 1 };
    return { granted: true, token: Number(reply[1]), validUntil: sentAt + lease - safety(lease) };
  }

  async fairRelease(k: LockKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult> {
    const epoch = this.epoch;
    const reply = this.resentRelease(
      (await withTimeout(scripts.fairRelease.run(this.connection, [k.key, k.queue, k.deadlines], [owner, k.fairChannel, this.publish, held]), timeout, 'release', k.name)) as number[],
      epoch,
      held,
    );
    if (reply[0] === 0) return { kind: 'notHeld' };
    if (reply[0] === 1) return { kind: 'decremented', count: Number(reply[1]) };
    return { kind: 'released', receivers: 0 };
  }

  async fairLeave(k: LockKeys, owner: string, timeout: number): Promise<void> {
    await withTimeout(scripts.fairLeave.run(this.connection, [k.key, k.queue, k.deadlines], [owner, k.fairChannel, this.publish]), timeout, 'leave the queue of', k.name);
  }

  async close(): Promise<void> {
    this.connection.off('ready', this.onReady);
    this.connection.off('close', this.onClose);
    if (isCluster(this.connection)) {
      this.connection.off('+node', this.onNode);
      for (const node of this.connection.nodes('all')) node.off('close', this.onClose);
    }
    this.restarts?.close();
    await this.subscriber.close();
  }
}
