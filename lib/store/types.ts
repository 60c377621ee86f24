import type { LockState, RenewReply } from './scripts/maintain.js';
import type { Script } from './scripts/script.js';

export type { LockState };

/** The Redis names of one lock: all share the `{name}` hash tag, so one cluster slot. */
export interface LockKeys {
  readonly name: string;
  readonly key: string;
  /**
   * The hold's identity in this client (registry, local waits, give-backs): the key
   * itself for a lock; distinct per role where one key carries several primitives'
   * holds (the read and the write side of a read-write lock).
   */
  readonly id: string;
  readonly fence: string;
  /** Quorum mode: where a release says 'released' to every waiting client. */
  readonly channel: string;
  /** The queue of waiting owners, their heartbeat deadlines, and the channel (one per client under it) naming the next one. */
  readonly queue: string;
  readonly deadlines: string;
  readonly fairChannel: string;
  /** Each waiting owner's ticket, or the grant a release made it, and the head's tenure (scripts/_queue.lua). */
  readonly tickets: string;
}

export type Granted = { granted: true; token: number; validUntil: number };
/**
 * counter: the name's last token when the attempt ran (the semaphore's: its last grant's
 * stamp), which dates a grant's message against it; head: the caller heads the queue;
 * windowLeft: ms until the head's barging window ends (0: none runs), when head.
 */
export type Refused = { granted: false; pttl: number; counter?: number; head?: boolean; windowLeft?: number };
export type AcquireResult = Granted | Refused;

export type ReleaseResult =
  | { kind: 'notHeld' }
  | { kind: 'decremented'; count: number }
  /** granted: the grants the release made to waiters at the queue's head; their messages, 'owner wait token'. */
  | { kind: 'released'; receivers: number; granted?: readonly string[] };

/**
 * How the watchdog renews a primitive's holds: one script call renews a batch of one
 * slot. Per item the script gets `keys(item.keys)` (always `arity` keys, in that
 * order) and ARGV owner, lease; it answers per item as renew.lua does.
 */
export interface RenewScript {
  readonly script: Script<(string | number)[], RenewReply[]>;
  readonly arity: number;
  keys(keys: LockKeys): readonly string[];
}

export interface RenewItem {
  readonly keys: LockKeys;
  readonly owner: string;
  readonly lease: number;
  /** Levels the owner holds (quorum mode puts them back on a master that lost the hold); 1 if absent. */
  readonly levels?: number;
  /** The primitive's renewal; absent: the lock hash's (renew.lua), the only kind quorum mode puts back. */
  readonly renewal?: RenewScript;
}

/** Per item: renewed (with the time the renewal was sent), or why not; an Error is transient. */
export type RenewOutcome = { ok: true; validUntil: number } | { ok: false; reason: 'taken' | 'deleted' | 'quorum' } | { ok: false; error: Error };

/**
 * Capability: the waiting queue in Redis of the lock and the fair lock (one master or a
 * Cluster; scripts/_queue.lua). `window`: the barging window in ms (0: the fair lock).
 */
export interface Queue {
  /**
   * An attempt. `wait`: the id of the wait making it, which joins (or heartbeats) the
   * queue when not granted; a release may then grant the lock to that wait directly
   * (its message on the client's channel). undefined: one attempt, never queued.
   */
  acquire(keys: LockKeys, owner: string, lease: number, heartbeat: number, wait: string | undefined, window: number, timeout: number, held: number): Promise<AcquireResult>;
  release(keys: LockKeys, owner: string, timeout: number, held: number, window: number): Promise<ReleaseResult>;
  /** The wait `wait` gives up: owner leaves the queue, and a grant made to that wait and never claimed is given back. */
  leave(keys: LockKeys, owner: string, timeout: number, wait: string, window: number): Promise<void>;
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
  releaseAll?(keys: readonly LockKeys[], owner: string, timeout: number, window: number): Promise<ReleaseResult>[] | undefined;
}

/**
 * Capability: counting semaphores (one master or a Cluster; see
 * primitives/semaphore/store.ts). Permits are held by id (an owner id used once), under a
 * lease; waiters queue in Redis in arrival order.
 */
export interface SemaphoreStore {
  /** The watchdog's batch renewal of permits. */
  readonly renewal: RenewScript;
  /**
   * Takes `permits` of `limit` for id, in queue order, or takes up a grant a release
   * made to the wait `wait`, which joins (or heartbeats) the queue when not granted
   * (undefined: one attempt, never queued). Rejects with a final LockError when Redis
   * keeps another limit for the name.
   */
  acquire(keys: LockKeys, id: string, permits: number, limit: number, lease: number, heartbeat: number, wait: string | undefined, timeout: number): Promise<AcquireResult>;
  /** A release grants the freed permits on, in arrival order, to the waiters at the head that fit (their messages in `granted`). */
  release(keys: LockKeys, id: string, timeout: number, held: number): Promise<ReleaseResult>;
  /** The wait `wait` gives up: id leaves the queue, and a grant made to that wait and never taken up is given back. */
  leave(keys: LockKeys, id: string, timeout: number, wait: string): Promise<void>;
  /** Permits held now (leases not run out); rejects as acquire when the limits differ. */
  held(keys: LockKeys, limit: number, timeout: number): Promise<number>;
  /** Tells every holder of live permits to let go (engine/holder-channel.ts); changes nothing. The permit ids asked. */
  requestRelease(keys: LockKeys, timeout: number): Promise<string[]>;
  /** Deletes every permit held and tells their holders; waiters ask again. True when permits were held. */
  forceRelease(keys: LockKeys, timeout: number): Promise<boolean>;
  /** The limit Redis keeps, the waiters and the live permits, whatever the caller's limit. */
  inspect(keys: LockKeys, timeout: number): Promise<SemaphoreState>;
}

/** What SemaphoreStore.inspect reads: the limit Redis keeps (null: none), the waiters, each live acquisition's permits. */
export interface SemaphoreState {
  readonly limit: number | null;
  readonly queued: number;
  readonly permits: readonly { readonly id: string; readonly permits: number; readonly ttl: number }[];
}

/**
 * The names of a read-write lock, all under its `{name}` hash tag. Both sides' keys
 * carry all of them; `key` is the side's own hash (`write`, or `read`), `fairChannel`
 * its waiters' channel, `queue`/`deadlines` the waiters of both sides.
 */
export interface ReadWriteKeys extends LockKeys {
  /** Which side: 'r' the read holds, 'w' the write hold. */
  readonly side: 'r' | 'w';
  /** The write hold: hash owner -> levels (a lock's layout). */
  readonly write: string;
  /** The read holds: hash owner -> levels. */
  readonly read: string;
  /** Each read hold's own expiry: sorted set owner -> ms (server clock). */
  readonly readers: string;
  readonly readChannel: string;
  readonly writeChannel: string;
}

/**
 * Capability: the read-write lock (one master or a Cluster; not with syncReplicas).
 * Waiters of both sides wait in one queue in Redis: an attempt with a wait id joins (or
 * heartbeats) it when not granted, a release grants the head (the writer, or the leading
 * readers), and leave() leaves it, giving back a grant the wait never took up.
 */
export interface ReadWriteStore {
  acquire(keys: ReadWriteKeys, owner: string, lease: number, heartbeat: number, wait: string | undefined, timeout: number, held: number): Promise<AcquireResult>;
  release(keys: ReadWriteKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult>;
  leave(keys: ReadWriteKeys, owner: string, timeout: number, wait: string): Promise<void>;
  /** Deletes the side's holds and tells their holders (engine/holder-channel.ts). */
  forceUnlock(keys: ReadWriteKeys, timeout: number): Promise<boolean>;
  /** Tells every holder of the side to let go (the readers whose lease is live); changes nothing. The owners asked. */
  requestRelease(keys: ReadWriteKeys, timeout: number): Promise<string[]>;
  /** The watchdog's renewal of read holds, every name's (a write hold is renewed as a lock is). */
  readonly renewal: RenewScript;
}

/**
 * The port to Redis: one implementation per topology (MasterStore for one master or a
 * Cluster, QuorumStore for N independent masters), optional capabilities beside it.
 *
 * `held` is how many levels this client knows the owner holds before the call (0 for a
 * new hold; 1 for a last release): the store applies each call once by it, whatever
 * the connection does (see store/master/exactly-once.ts).
 */
export interface Store {
  /** How many independent masters vote (1 for a single master or a Cluster). */
  readonly size: number;
  /** Smoothed round trip of acquisitions (ms). */
  readonly rtt: number;
  readonly queue?: Queue;
  readonly readWrite?: ReadWriteStore;
  readonly semaphore?: SemaphoreStore;
  /** The lock without a queue (quorum mode): one attempt; a release says 'released' on keys.channel. */
  acquire(keys: LockKeys, owner: string, lease: number, timeout: number, held: number): Promise<AcquireResult>;
  release(keys: LockKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult>;
  renew(items: readonly RenewItem[], timeout: number): Promise<RenewOutcome[]>;
  forceUnlock(keys: LockKeys, timeout: number): Promise<boolean>;
  /** Tells every holder of the lock hash to let go (engine/holder-channel.ts); changes nothing. The owners asked. */
  requestRelease(keys: LockKeys, timeout: number): Promise<string[]>;
  isLocked(keys: LockKeys, timeout: number): Promise<boolean>;
  holdCount(keys: LockKeys, owner: string, timeout: number): Promise<number>;
  pttl(keys: LockKeys, timeout: number): Promise<number>;
  /** Who holds the lock, its TTL, last token and fair queue length (a majority's view in quorum mode). */
  inspect(keys: LockKeys, timeout: number): Promise<LockState>;
  /**
   * Subscribe `listener` to a channel on every master; resolves once subscribed (or given
   * up on, bounded). `undefined` instead of a message: the subscription's connection broke
   * (closed, reconnecting), or it is subscribed again after a break, or its first SUBSCRIBE
   * was confirmed only after it was given up on: messages may have been lost meanwhile.
   * It resubscribes by itself. `plain`: SUBSCRIBE even where the store subscribes sharded
   * (a channel that scripts of any slot PUBLISH to, such as the client's holder channel).
   */
  subscribe(channel: string, listener: (message: string | undefined) => void, plain?: boolean): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  /**
   * Unsubscribes, on the server, whatever this client is still subscribed to, and takes
   * no new subscription (bounded; skipped on a master known to be down). The client's
   * close() calls it before rejecting pending waits, then close().
   */
  dropSubscriptions(): Promise<void>;
  close(): Promise<void>;
}
