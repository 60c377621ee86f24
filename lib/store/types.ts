import type { LockState, RenewReply } from './scripts/maintain.js';
import type { Script } from './scripts/script.js';

export type { LockState };

/**
 * The Redis names of one lock that the Store and the engine use: all share the `{name}`
 * hash tag, so one cluster slot. A primitive derives its other keys (a queue's: queueKeys).
 */
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
  /** Waits 'client' (quorum mode): where a release says 'released' to every waiting client. */
  readonly channel: string;
  /** Waits 'queue' (WaitStyle): a queue's release grants and wakes on `<wakeChannel>:<host:pid:client:>` (each client's own), '*' on this one. */
  readonly wakeChannel: string;
}

export type Granted = { granted: true; token: number; validUntil: number };
/**
 * counter: the name's last token when the attempt ran (the semaphore's: its last grant's
 * stamp), which dates a grant's message against it; head: the caller heads the queue.
 */
export type Refused = { granted: false; pttl: number; counter?: number; head?: boolean };
export type AcquireResult = Granted | Refused;

export type ReleaseResult =
  | { kind: 'notHeld' }
  | { kind: 'decremented'; count: number }
  /**
   * granted: the grants the release made to waiters at the queue's head; their messages, 'owner wait token'.
   * brokeAt: see ReleaseReply (a resend's "not held" after a reconnect).
   */
  | { kind: 'released'; granted?: readonly string[]; brokeAt?: number };

/**
 * How the watchdog renews a primitive's holds: one script call renews a batch of one
 * slot and script. Per item the script gets `keys(item.keys)` of the item's own
 * RenewScript (always `arity` keys, in that order; one may ignore its argument and name
 * the keys it was made for) and ARGV owner, lease; it answers per item as renew.lua does.
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
 * What the store asks of the client's holds (the engine's HoldRegistry answers it): the
 * levels `owner` holds now of the hold `id` (LockKeys.id; 0 for none). Asked when a
 * give-back is sent, which may be long after the call it undoes (a grant that came
 * after its bound): the give-back passes what Redis counts with that grant (these + 1),
 * so that a resend of it drops nothing the owner holds then (store/master/exactly-once.ts).
 * Read only: the store never changes the client's holds.
 */
export interface HeldLevels {
  levelsOf(id: string, owner: string): number;
}

/**
 * The port to Redis of the engine, the watchdog and the lock: one implementation per
 * topology (MasterStore for one master or a Cluster, QuorumStore for N independent
 * masters). It knows no primitive but the lock hash (the quorum's lock, renewals,
 * queries); a primitive that keeps more in Redis builds its own store calls in its
 * folder, over one master's MasterPort (store/master/port.ts).
 *
 * `held` is how many levels this client knows the owner holds before the call (0 for a
 * new hold; 1 for a last release): the store applies each call once by it, whatever
 * the connection does (see store/master/exactly-once.ts).
 */
export interface Store {
  /** How many independent masters vote (1 for a single master or a Cluster). */
  readonly size: number;
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
  /** Who holds the lock hash, its TTL, last token and the length of the queue on it (a majority's view in quorum mode). */
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
