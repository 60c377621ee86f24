/** The Redis names of one lock: all three share the `{name}` hash tag, so one cluster slot. */
export interface LockKeys {
  readonly name: string;
  readonly key: string;
  readonly fence: string;
  readonly channel: string;
  /** Fair lock only: the queue of waiting owners, their heartbeat deadlines, and the channel naming the next one. */
  readonly queue: string;
  readonly deadlines: string;
  readonly fairChannel: string;
}

export type AcquireResult =
  | { granted: true; token: number; validUntil: number }
  | { granted: false; pttl: number; counter?: number };

export type ReleaseResult =
  | { kind: 'notHeld' }
  | { kind: 'decremented'; count: number }
  | { kind: 'released'; receivers: number }
  | { kind: 'handedOff'; token: number; validUntil: number };

export interface RenewItem {
  readonly keys: LockKeys;
  readonly owner: string;
  readonly lease: number;
  /** Levels the owner holds (quorum mode puts them back on a master that lost the hold); 1 if absent. */
  readonly levels?: number;
}

/** Per item: renewed (with the time the renewal was sent), or why not; an Error is transient. */
export type RenewOutcome = { ok: true; validUntil: number } | { ok: false; reason: 'taken' | 'deleted' | 'quorum' } | { ok: false; error: Error };

export interface NextOwner {
  readonly owner: string;
  readonly lease: number;
  /**
   * When set, the hand-off only happens if no other client waits: the value is how
   * many subscriptions to the lock's channel are this client's own.
   */
  readonly unlessOthersWait?: number;
}

/**
 * One master or an ioredis Cluster (Master), or N independent masters (Quorum): the same calls.
 *
 * `held` is how many levels this client knows the owner holds before the call (0 for a
 * new hold; 1 for a last release). ioredis resends commands whose reply a broken
 * connection lost, and a reentry or a release counted twice would keep a lock held after
 * the last unlock, or free it too early: release scripts apply a level only when Redis
 * has as many as the client knows, and a grant that crossed a reconnect has its level
 * set to held + 1 afterwards (see Master.settleLevel).
 */
export interface Backend {
  /** How many independent masters vote (1 for a single master or a Cluster). */
  readonly size: number;
  acquire(keys: LockKeys, owner: string, lease: number, timeout: number, held: number): Promise<AcquireResult>;
  release(keys: LockKeys, owner: string, next: NextOwner | undefined, timeout: number, held: number): Promise<ReleaseResult>;
  renew(items: readonly RenewItem[], timeout: number): Promise<RenewOutcome[]>;
  forceUnlock(keys: LockKeys, timeout: number): Promise<boolean>;
  isLocked(keys: LockKeys, timeout: number): Promise<boolean>;
  holdCount(keys: LockKeys, owner: string, timeout: number): Promise<number>;
  pttl(keys: LockKeys, timeout: number): Promise<number>;
  /** Subscribe `listener` to a lock's channel on every master; resolves once subscribed. */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  /** Fair lock: an attempt in queue order; `enqueue` joins (or heartbeats) the queue when not granted. */
  fairAcquire(keys: LockKeys, owner: string, lease: number, heartbeat: number, enqueue: boolean, timeout: number, held: number): Promise<AcquireResult & { head?: boolean }>;
  fairRelease(keys: LockKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult>;
  fairLeave(keys: LockKeys, owner: string, timeout: number): Promise<void>;
  close(): Promise<void>;
}

