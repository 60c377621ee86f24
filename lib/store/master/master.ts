import type { RedisClientPort } from '../client/redis-client.js';
import { identity, withTimeout } from '../../util/timeout.js';
import { heldUntil } from '../lease-margin.js';
import * as acquireScripts from '../scripts/acquire.js';
import { granted, type PublishVerb } from '../scripts/acquire.js';
import * as maintain from '../scripts/maintain.js';
import * as releaseScripts from '../scripts/release.js';
import type { AcquireResult, HeldLevels, LockKeys, LockState, ReleaseResult, RenewItem, RenewOutcome, RenewScript, Store } from '../types.js';
import { RestartWatch } from '../quorum/restarts.js';
import type { SyncReplicas } from '../../options.js';
import { ExactlyOnce, type GiveBack } from './exactly-once.js';
import type { MasterPort } from './port.js';
import { ReplicaSync } from './replica-sync.js';
import { clusterSlot } from './slot.js';
import { Subscriber } from './subscriber.js';

/** Holds per renewal script call: big enough to make 10 000 holds a handful of calls, small enough not to block Redis. */
const RENEW_CHUNK = 500;

const now = () => performance.now();

/** The lock hash's renewal (renew.lua), for items of primitives that bring none. */
const LOCK_RENEWAL: RenewScript = { script: maintain.renew, arity: 1, keys: (k) => [k.key] };

/**
 * One Redis master, or a Cluster (each script touches one slot, so the client library
 * routes it by its first key), through the client port (store/client): the lock hash's
 * calls, renewals, queries and subscriptions. As a MasterPort it is what the primitives
 * that keep a queue or a count in Redis build their store calls from (their folders
 * do, from the client's getters). In quorum mode (watchRestarts) it is one of several
 * masters, and only its lock hash's calls are used: the quorum's lock waits in its clients.
 */
export class MasterStore implements Store, MasterPort {
  readonly size = 1;
  /** The exactly-once rules of quorum mode's acquire and release (acquire.lua, release.lua). */
  readonly once: ExactlyOnce;
  readonly publish: PublishVerb;
  readonly sync: ReplicaSync | undefined;
  private readonly subscriber: Subscriber;
  private readonly cluster: boolean;
  /** Every ExactlyOnce made (its own and the primitives'): each counts this connection's breaks until close(). */
  private readonly onces: { close(): void }[] = [];

  /**
   * @param levels the levels the client holds now (its HoldRegistry), asked when a give-back is sent.
   * @param keyRetention the TTL (ms) of a name's fencing counter from its last use, which
   *   every script that mints or raises a token sets (tokens follow the server's clock
   *   across its expiry: see scripts/_mint.lua).
   */
  constructor(
    readonly connection: RedisClientPort,
    readonly levels: HeldLevels,
    readonly keyRetention: number,
    syncReplicas?: Readonly<SyncReplicas>,
  ) {
    this.cluster = connection.isCluster;
    this.publish = this.cluster ? 'spublish' : 'publish';
    this.subscriber = new Subscriber(connection);
    this.once = this.exactlyOnce(this.giveBack);
    this.sync = syncReplicas && new ReplicaSync(connection, syncReplicas);
  }

  exactlyOnce<K extends LockKeys>(giveBack: GiveBack<K>): ExactlyOnce<K> {
    const once = new ExactlyOnce<K>(this.connection, this.levels, giveBack);
    this.onces.push(once);
    return once;
  }

  /** Epoch of the connection (see ExactlyOnce): quorum mode does not count a grant that crossed a reconnect. */
  get epoch(): number {
    return this.once.epoch;
  }

  /** Not ready after having been (see RedisClientPort.down): quorum mode counts the master out at once. */
  get down(): boolean {
    return this.connection.down;
  }

  /** Quorum mode: set by watchRestarts(). */
  restarts: RestartWatch | undefined;

  /** Quorum mode: after a restart this master sits out votes for `sitOut` ms (see RestartWatch). */
  watchRestarts(sitOut: number, mark: string): void {
    this.restarts ??= new RestartWatch(this.connection, sitOut, mark);
  }

  /** Quorum mode (one of the masters): one attempt, no queue. Not async: one step from the reply to the result. */
  acquire(k: LockKeys, owner: string, lease: number, timeout: number, held: number): Promise<AcquireResult> {
    let sentAt = 0;
    const restarts = this.restarts;
    const keys = restarts ? [k.key, k.fence, restarts.mark] : [k.key, k.fence];
    const args: [string, number] | [string, number, number] = this.keyRetention === acquireScripts.SCRIPT_RETENTION ? [owner, lease] : [owner, lease, this.keyRetention];
    const send = () => {
      sentAt = now();
      return this.sync ? this.sync.acquire(acquireScripts.acquire, keys, args, k, owner, held, timeout, this.giveBack) : acquireScripts.acquire.run(this.connection, keys, args);
    };
    return this.once.grant(k, owner, held, timeout + (this.sync?.timeout ?? 0), send, (reply) => {
      // Before the quorum counts the grant: a restart it tells of makes this master sit out.
      if (reply.met) restarts?.met(reply.met);
      return granted(reply, sentAt, lease);
    });
  }

  /** Quorum mode (one of the masters): a release that says 'released' to every waiting client. */
  release(k: LockKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult> {
    const call = releaseScripts.release.run(this.connection, [k.key], releaseScripts.releaseArgs(owner, held, this.publish));
    return this.once.release(k, owner, held, timeout, call, identity);
  }

  /**
   * Quorum mode: drops one level of owner's, best effort: a grant nobody will use.
   * `levels` is what Redis counts with that grant (the client's levels + 1): a resend of
   * the give-back (its reply lost) then finds fewer and drops nothing. Given 1 for a
   * reentry, the resend would take a level the owner holds and free the lock under it.
   */
  private readonly giveBack = (k: LockKeys, owner: string, timeout: number, levels: number): Promise<unknown> =>
    this.release(k, owner, timeout, levels).catch(() => undefined);

  async renew(items: readonly RenewItem[], timeout: number): Promise<RenewOutcome[]> {
    const sentAt = now();
    const outcomes: RenewOutcome[] = new Array(items.length);
    const calls: Promise<void>[] = [];
    for (const { renewal, indexes } of this.groups(items)) {
      for (let start = 0; start < indexes.length; start += RENEW_CHUNK) {
        const chunk = indexes.slice(start, start + RENEW_CHUNK);
        const keys: string[] = [];
        const args: (string | number)[] = [];
        for (const i of chunk) {
          // Each item's own renewal names its keys (a group shares the script, not the keys).
          keys.push(...(items[i].renewal ?? renewal).keys(items[i].keys));
          args.push(items[i].owner, items[i].lease);
        }
        calls.push(
          withTimeout(
            this.sync ? this.sync.renew(renewal.script, keys, args) : renewal.script.run(this.connection, keys, args),
            timeout + (this.sync?.timeout ?? 0),
            'renewal',
          ).then(
            (reply) => {
              chunk.forEach((i, j) => {
                const r = reply[j];
                outcomes[i] = r === 'renewed' ? { ok: true, validUntil: heldUntil(sentAt, items[i].lease) } : { ok: false, reason: r };
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

  /**
   * Indexes of items, grouped by renewal script and, in a Cluster, by slot: each
   * group's keys share a slot and one script call renews them (one group on a plain
   * master holding only locks).
   */
  private groups(items: readonly RenewItem[]): { renewal: RenewScript; indexes: number[] }[] {
    const groups = new Map<string, { renewal: RenewScript; indexes: number[] }>();
    items.forEach((item, i) => {
      const renewal = item.renewal ?? LOCK_RENEWAL;
      const id = this.cluster ? `${renewal.script.sha}:${clusterSlot(item.keys.key)}` : renewal.script.sha;
      const group = groups.get(id);
      if (group) group.indexes.push(i);
      else groups.set(id, { renewal, indexes: [i] });
    });
    return [...groups.values()];
  }

  forceUnlock(k: LockKeys, timeout: number): Promise<boolean> {
    return withTimeout(releaseScripts.forceUnlock.run(this.connection, [k.key], [k.channel, this.publish, releaseScripts.HOLDER_CHANNEL, k.id]), timeout, 'forceUnlock', k.name);
  }

  requestRelease(k: LockKeys, timeout: number): Promise<string[]> {
    return withTimeout(releaseScripts.requestRelease.run(this.connection, [k.key], [releaseScripts.HOLDER_CHANNEL, k.id]), timeout, 'requestRelease', k.name);
  }

  async isLocked(k: LockKeys, timeout: number): Promise<boolean> {
    return (await withTimeout(this.connection.exists(k.key), timeout, 'isLocked', k.name)) === 1;
  }

  async holdCount(k: LockKeys, owner: string, timeout: number): Promise<number> {
    const v = await withTimeout(this.connection.hget(k.key, owner), timeout, 'getHoldCount', k.name);
    return v === null ? 0 : Number(v);
  }

  pttl(k: LockKeys, timeout: number): Promise<number> {
    return withTimeout(this.connection.pttl(k.key), timeout, 'remainTimeToLive', k.name);
  }

  inspect(k: LockKeys, timeout: number): Promise<LockState> {
    return withTimeout(maintain.inspect.run(this.connection, [k.key, k.fence], []), timeout, 'inspect', k.name);
  }

  async fenceFloor(k: LockKeys, floor: number, timeout: number): Promise<void> {
    await withTimeout(maintain.fenceFloor.run(this.connection, [k.fence], [floor, this.keyRetention]), timeout, 'fence floor', k.name);
  }

  subscribe(channel: string, listener: (message: string | undefined) => void, plain?: boolean): Promise<void> {
    return this.subscriber.subscribe(channel, listener, 2_000, plain);
  }

  unsubscribe(channel: string): Promise<void> {
    return this.subscriber.unsubscribe(channel, 2_000);
  }

  dropSubscriptions(): Promise<void> {
    return this.subscriber.drop();
  }

  async close(): Promise<void> {
    this.connection.close();
    for (const once of this.onces) once.close();
    this.restarts?.close();
    await this.subscriber.close();
  }
}
