import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import type { AcquireResult, Backend, LockKeys } from './backend/types.js';
import { Master } from './backend/master.js';
import { Quorum } from './backend/quorum.js';
import { raceAbort } from './abort.js';
import { waitFair, type FairHost } from './fair-waiting.js';
import { checkConnections, type Connection } from './connection.js';
import { LockError } from './errors/LockError.js';
import { LockLostError, type LossReason } from './errors/LockLostError.js';
import { LockNotHeldError } from './errors/LockNotHeldError.js';
import type { ClientEvents, LockEvents } from './events.js';
import { Hold } from './hold.js';
import { HoldRegistry } from './registry.js';
import { Lock } from './lock.js';
import { checkName, describe, resolveClientOptions, type ClientOptions, type ResolvedOptions } from './options.js';
import { newScope, runInScope, type Scope } from './scope.js';
import { WaitQueue, type Waiter } from './waiting.js';
import { Watchdog } from './watchdog.js';

const now = () => performance.now();

/**
 * Local hand-offs in a row after which a release checks for waiters in other clients
 * and, if there are any, publishes instead: one process with many waiters may not keep
 * the lock to itself.
 */
const LOCAL_CHAIN = 4;

/**
 * How long a key's subscription outlives its last local waiter: a busy lock's next
 * waiter usually comes within it, and re-subscribing costs two round trips a wait.
 */
const LINGER = 200;

/**
 * Entry point: one per process (or per Redis topology). Hands out cheap Lock handles,
 * owns the hold registry, the local wait queues, the pub/sub subscriptions and the
 * watchdog of every lock taken through it.
 */
export class LockClient extends EventEmitter<ClientEvents> {
  /** Random per client: the first half of every owner id it writes (`clientId:scopeId`). */
  readonly id: string = randomUUID();
  /** @internal */ readonly options: ResolvedOptions;
  /** @internal */ readonly backend: Backend;
  private readonly watchdog: Watchdog;
  /** What this client holds, as far as it knows. */
  private readonly holds = new HoldRegistry();
  private readonly queues = new Map<string, WaitQueue>();
  private readonly perName = new Map<string, EventEmitter<LockEvents>>();
  /** Consecutive local hand-offs per key (see LOCAL_CHAIN). */
  private readonly chains = new Map<string, number>();
  /**
   * Per key: until when this client stays out of the way after a release that other
   * clients were waiting for, so that their retry wins over our own re-grab (no barging).
   */
  private readonly yields = new Map<string, number>();
  /** Fair waiters of this client per key: their owner ids -> wake-ups, behind one subscription per key. */
  private readonly fairWatchers = new Map<string, { owners: Map<string, Set<() => void>>; ready: Promise<void> }>();
  private lastUnscoped = 0;
  private closed = false;

  /**
   * @param connection an ioredis Redis or Cluster, or an array of independent Redis
   *   masters (quorum mode). holdfast never closes them.
   */
  constructor(connection: Connection | readonly Connection[], options?: ClientOptions) {
    super();
    const connections = checkConnections(connection);
    this.options = resolveClientOptions(options);
    const masters = connections.map((c) => new Master(c, (key, owner) => levelsOf(this.holdOf(key, owner))));
    this.backend = Array.isArray(connection) ? new Quorum(
            masters,
            this.options.driftFactor,
            // Longer than the longest lease a holder could still believe in, with room for
            // its timers firing late on a busy machine (Redlock: restart delay > max TTL).
            this.options.watchdogTimeout + Math.max(100, this.options.watchdogTimeout / 4),
          ) : masters[0];
    this.watchdog = new Watchdog(this.backend, {
      renewed: (hold) => this.publish('renewed', hold.keys.name, { name: hold.keys.name, owner: hold.owner, leaseTime: hold.lease }),
      renewalFailed: (hold, error, attempt) =>
        this.publish('renewalFailed', hold.keys.name, { name: hold.keys.name, owner: hold.owner, error, attempt }),
      lost: (hold, reason, cause) => this.lose(hold, reason, cause),
    }, (lease) => this.timeoutFor(lease));
  }

  /** A handle on the lock called `name`; cheap, any number per name. */
  getLock(name: string): Lock {
    this.assertOpen();
    return new Lock(this, checkName(name), false);
  }

  /**
   * A handle on a fair lock: the same API as getLock, but granted strictly in request
   * order across processes (a queue in Redis). One master or a Cluster; not quorum mode.
   * Don't use one name both as a fair and a plain lock.
   */
  getFairLock(name: string): Lock {
    this.assertOpen();
    checkName(name);
    if (this.backend instanceof Quorum) throw new LockError('fair locks need one master or a Cluster; quorum mode has none');
    return new Lock(this, name, true);
  }

  /** Runs fn in a new owner scope: locks taken inside reenter, and are its own. */
  scope<T>(fn: () => T): T {
    if (typeof fn !== 'function') throw new TypeError(`scope(fn): fn must be a function, got ${describe(fn)}`);
    return runInScope(newScope(), fn);
  }

  /**
   * Stops the watchdog (held locks expire at the end of their lease), rejects pending
   * waits with a LockError, drops subscriptions. The user's connections stay open.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new LockError('client closed');
    for (const queue of this.queues.values()) {
      for (const waiter of [...queue.waiters]) waiter.reject(error);
      queue.wake();
    }
    for (const { owners } of this.fairWatchers.values()) for (const wakes of owners.values()) for (const wake of wakes) wake();
    this.watchdog.stop();
    await this.backend.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  // ---- internals used by Lock -------------------------------------------------------

  /** @internal */
  assertOpen(): void {
    if (this.closed) throw new LockError('client closed');
  }

  /** @internal */
  keysOf(name: string): LockKeys {
    const key = `${this.options.keyPrefix}{${name}}`;
    return { name, key, fence: `${key}:fence`, channel: `${key}:ch`, queue: `${key}:queue`, deadlines: `${key}:deadlines`, fairChannel: `${key}:next` };
  }

  /** @internal */
  ownerOf(scope: Scope): string {
    return `${this.id}:${scope.id}`;
  }

  /** @internal An owner for one acquisition made outside every scope. */
  unscopedOwner(): string {
    return `${this.id}:~${(++this.lastUnscoped).toString(36)}`;
  }

  /** @internal */
  holdOf(key: string, owner: string): Hold | undefined {
    return this.holds.get(key, owner);
  }

  /** @internal Bound of one Redis call about a lock with this lease. */
  timeoutFor(lease: number): number {
    return this.options.commandTimeout ?? Math.min(5_000, Math.max(100, Math.floor(lease / 3)));
  }

  /** @internal */
  events(name: string, create: boolean): EventEmitter<LockEvents> | undefined {
    let emitter = this.perName.get(name);
    if (!emitter && create) {
      emitter = new EventEmitter<LockEvents>();
      this.perName.set(name, emitter);
    }
    return emitter;
  }

  /** @internal Drops a handle's per-name emitter once nobody listens to it. */
  releaseEvents(name: string): void {
    const emitter = this.perName.get(name);
    if (emitter && emitter.eventNames().length === 0) this.perName.delete(name);
  }

  /**
   * @internal Takes the lock for owner: reentry, one attempt, or a wait in the local
   * queue. Resolves with the hold, or null when waitTime ran out.
   */
  async acquire(keys: LockKeys, owner: string, leaseTime: number | undefined, waitTime: number | undefined, signal: AbortSignal | undefined, fair = false): Promise<Hold | null> {
    this.assertOpen();
    signal?.throwIfAborted();
    const start = now();
    const lease = leaseTime ?? this.options.watchdogTimeout;
    const watchdog = leaseTime === undefined;
    const mine = this.holdOf(keys.key, owner);
    if (fair) return this.acquireFair(keys, owner, lease, watchdog, waitTime, signal, start, mine);
    const queue = this.queues.get(keys.key);
    // No barging: with local waiters queued, or the lock held by another local owner,
    // a waiting caller joins the queue and gets the lock handed over in turn.
    const queueFirst = !mine?.joinable && waitTime !== 0 && ((queue && !queue.idle) || this.holds.heldByOther(keys.key, owner) || this.yielding(keys.key));
    if (!queueFirst) {
      const call = this.backend.acquire(keys, owner, lease, this.timeoutFor(lease), levelsOf(mine));
      const result = await raceAbort(call, signal, (late) => late.granted && this.undo(keys, owner, false));
      if (result.granted) return this.register(keys, owner, lease, watchdog, result, start);
      if (mine?.joinable) this.lose(mine, 'taken');
      if (waitTime === 0) return null;
    }
    return this.wait(keys, owner, lease, watchdog, start + (waitTime ?? Infinity), start, signal);
  }

  private async acquireFair(keys: LockKeys, owner: string, lease: number, watchdog: boolean, waitTime: number | undefined, signal: AbortSignal | undefined, start: number, mine: Hold | undefined): Promise<Hold | null> {
    if (mine?.joinable || waitTime === 0) {
      // A reentry, or one attempt: neither joins the queue.
      const call = this.backend.fairAcquire(keys, owner, lease, this.options.watchdogTimeout, false, this.timeoutFor(lease), levelsOf(mine));
      const result = await raceAbort(call, signal, (late) => late.granted && this.undo(keys, owner, true));
      if (result.granted) return this.register(keys, owner, lease, watchdog, result, start, true);
      if (mine?.joinable) this.lose(mine, 'taken');
      if (waitTime === 0) return null;
    }
    const granted = await waitFair(this.fairHost(), keys, owner, lease, start + (waitTime ?? Infinity), signal);
    return granted && this.register(keys, owner, lease, watchdog, granted, start, true);
  }

  private fairHost(): FairHost {
    const client = this;
    return {
      backend: this.backend,
      get isClosed() {
        return client.closed;
      },
      heartbeat: this.options.watchdogTimeout,
      timeoutFor: (lease) => this.timeoutFor(lease),
      watch: (keys, owner, wake) => this.watchFair(keys, owner, wake),
      undo: (keys, owner) => this.undo(keys, owner, true),
      reportError: (error) => this.emit('error', error instanceof Error ? error : new Error(String(error))),
    };
  }

  /** One subscription per key to the fair channel, shared by this client's fair waiters. */
  private async watchFair(keys: LockKeys, owner: string, wake: () => void): Promise<() => void> {
    let entry = this.fairWatchers.get(keys.key);
    if (!entry) {
      const owners = new Map<string, Set<() => void>>();
      const ready = this.backend.subscribe(keys.fairChannel, (next) => {
        for (const w of owners.get(next) ?? []) w();
      });
      this.fairWatchers.set(keys.key, (entry = { owners, ready }));
    }
    const { owners, ready } = entry;
    let wakes = owners.get(owner);
    if (!wakes) owners.set(owner, (wakes = new Set()));
    wakes.add(wake);
    await ready;
    return () => {
      wakes!.delete(wake);
      if (wakes!.size === 0) owners.delete(owner);
      if (owners.size === 0 && this.fairWatchers.get(keys.key) === entry) {
        this.fairWatchers.delete(keys.key);
        this.backend.unsubscribe(keys.fairChannel).catch(() => undefined);
      }
    };
  }

  /** @internal Drops one level of hold; at the last, releases or hands the lock to the next local waiter. */
  async release(hold: Hold): Promise<void> {
    const { keys, owner } = hold;
    if (hold.lost) {
      hold.count -= 1;
      if (hold.count <= 0) this.holds.remove(hold);
      throw hold.lost;
    }
    if (hold.released || hold.releasing) throw new LockNotHeldError(keys.name, 'it was already released');
    const timeout = this.timeoutFor(hold.lease);
    if (hold.count > 1) {
      hold.count -= 1;
      let result;
      try {
        const held = hold.count + 1;
        result = await (hold.fair ? this.backend.fairRelease(keys, owner, timeout, held) : this.backend.release(keys, owner, undefined, timeout, held));
      } catch {
        // Did Redis drop the level? Unknown, and it need not be known: the level is
        // dropped here, and the caller's last unlock gives back any level Redis still
        // counts. Kept, it would have to be unlocked once more, which a caller
        // unwinding with the error (run() does) never does: the lock would be renewed
        // for good (Cluster chaos saw it). Rejecting would fail a run() whose fn succeeded.
        return;
      }
      // The client's count stands, whatever Redis counts: levels Redis has beyond it
      // (a grant run twice whose level could not be settled) belong to nobody, and
      // adopted they would outlive the caller's last unlock, renewed for good (the
      // shape of the Cluster chaos ghost, found by reading); the last unlock drops them. Fewer levels in Redis: the guard in
      // the script keeps the lock until the caller's last unlock all the same.
      if (result.kind === 'decremented') return;
      if (result.kind === 'notHeld') {
        this.lose(hold, 'deleted');
        hold.count = 0;
        this.holds.remove(hold);
        throw hold.lost ?? new LockNotHeldError(keys.name);
      }
      // 'released': Redis had fewer levels than we did (a master restarted): done.
      this.finishRelease(hold);
      return;
    }
    // The last level: from here on the watchdog never sends a renewal for this hold.
    hold.releasing = true;
    this.watchdog.untrack(hold);
    const queue = this.queues.get(keys.key);
    const next = hold.fair ? undefined : queue?.next();
    if (next) next.claimed = true;
    const chain = this.chains.get(keys.key) ?? 0;
    const ownSubscriptions = queue?.pumping ? 1 : 0;
    const nextOwner = next && { owner: next.owner, lease: next.lease, unlessOthersWait: chain >= LOCAL_CHAIN ? ownSubscriptions : undefined };
    let result;
    try {
      result = await (hold.fair ? this.backend.fairRelease(keys, owner, timeout, hold.count) : this.backend.release(keys, owner, nextOwner, timeout, hold.count));
    } catch (error) {
      hold.releasing = false;
      hold.released = true;
      this.holds.remove(hold);
      if (next) next.claimed = false;
      queue?.wake();
      throw new LockError(`unlock of '${keys.name}' failed; the lock will expire within its lease`, { cause: error, lockName: keys.name });
    }
    switch (result.kind) {
      case 'notHeld': {
        if (next) next.claimed = false;
        hold.releasing = false;
        this.lose(hold, 'deleted');
        this.holds.remove(hold);
        throw hold.lost ?? new LockNotHeldError(keys.name);
      }
      case 'decremented': {
        // Redis counts levels nobody here holds (a hand-off that timed out and a retry
        // of its waiter, a grant not yet given back): this unlock ends the hold all the
        // same. Kept and renewed, those levels would hold the lock for good (Cluster
        // chaos saw it); dropped, the lock is free at once.
        if (next) next.claimed = false;
        this.finishRelease(hold);
        void this.dropLevels(keys, owner, result.count, timeout, hold.fair);
        return;
      }
      case 'released':
        if (next) next.claimed = false;
        this.chains.delete(keys.key);
        // Other clients were woken for this lock: give their retry a head start.
        if (result.receivers > ownSubscriptions) this.yields.set(keys.key, now() + Math.min(10, Math.max(1, ((this.backend as Master).rtt ?? 1) * 3)));
        this.finishRelease(hold);
        return;
      case 'handedOff': {
        this.chains.set(keys.key, chain + 1);
        this.finishRelease(hold);
        if (!next) return;
        next.claimed = false;
        const granted = { granted: true as const, token: result.token, validUntil: result.validUntil };
        if (next.settled) this.undo(keys, next.owner, false);
        else next.resolve(this.register(keys, next.owner, next.lease, next.watchdog, granted, next.start));
        return;
      }
    }
  }

  /** Gives back levels of owner that Redis still counts after its last unlock. */
  private async dropLevels(keys: LockKeys, owner: string, count: number, timeout: number, fair: boolean): Promise<void> {
    try {
      for (let held = count; held > 0; held--) {
        const r = await (fair ? this.backend.fairRelease(keys, owner, timeout, held) : this.backend.release(keys, owner, undefined, timeout, held));
        if (r.kind !== 'decremented') return;
      }
    } catch (error) {
      this.emit('error', new LockError(`could not drop the leftover levels of '${keys.name}'; they expire with the lease`, { cause: error, lockName: keys.name }));
    }
  }

  /** @internal Deletes the lock whoever holds it; local holds of it are lost ('deleted'). */
  async forceUnlock(keys: LockKeys): Promise<boolean> {
    this.assertOpen();
    const deleted = await this.backend.forceUnlock(keys, this.timeoutFor(this.options.watchdogTimeout));
    for (const hold of [...this.holds.of(keys.key)]) if (hold.live) this.lose(hold, 'deleted');
    return deleted;
  }

  // ---- holds ----------------------------------------------------------------------

  private register(keys: LockKeys, owner: string, lease: number, watchdog: boolean, result: AcquireResult & { granted: true }, start: number, fair = false): Hold {
    const current = this.holdOf(keys.key, owner);
    if (current?.joinable) {
      current.count += 1;
      if (result.validUntil > current.validUntil) {
        current.validUntil = result.validUntil;
        this.watchdog.touched(current);
      }
      return current;
    }
    const hold = new Hold(keys, owner, result.token, lease, watchdog, result.validUntil, fair);
    this.holds.add(hold);
    this.watchdog.track(hold);
    if (this.wants('acquired', keys.name)) this.publish('acquired', keys.name, { name: keys.name, owner, token: result.token, waitedMs: now() - start });
    return hold;
  }

  private finishRelease(hold: Hold): void {
    hold.count = 0;
    hold.releasing = false;
    hold.released = true;
    this.watchdog.untrack(hold);
    this.holds.remove(hold);
    if (this.wants('released', hold.keys.name)) this.publish('released', hold.keys.name, { name: hold.keys.name, owner: hold.owner });
    this.queues.get(hold.keys.key)?.wake();
  }

  private lose(hold: Hold, reason: LossReason, cause?: unknown): void {
    if (hold.lost || hold.released) return;
    const error = new LockLostError(hold.keys.name, hold.owner, reason, cause);
    hold.markLost(error);
    this.watchdog.untrack(hold);
    this.publish('lost', hold.keys.name, { name: hold.keys.name, owner: hold.owner, reason, error });
    this.queues.get(hold.keys.key)?.wake();
  }

  /** Inside the window after a release that other clients were waiting for. */
  private yielding(key: string): boolean {
    const until = this.yields.get(key);
    if (until === undefined) return false;
    if (until > now()) return true;
    this.yields.delete(key);
    return false;
  }

  /**
   * Give back a grant nobody will use (a waiter that left while it was on its way, a
   * reentry aborted while out). It passes the levels Redis counts with that grant, so
   * a resend of the give-back drops nothing the owner still holds (see Master.giveBack).
   */
  private undo(keys: LockKeys, owner: string, fair: boolean): void {
    const timeout = this.timeoutFor(this.options.watchdogTimeout);
    const levels = levelsOf(this.holdOf(keys.key, owner)) + 1;
    (fair ? this.backend.fairRelease(keys, owner, timeout, levels) : this.backend.release(keys, owner, undefined, timeout, levels)).then(
      () => this.queues.get(keys.key)?.wake(),
      (error: Error) => this.emit('error', new LockError(`could not give back an unused grant of '${keys.name}'; it expires with its lease`, { cause: error, lockName: keys.name })),
    );
  }

  // ---- waiting --------------------------------------------------------------------

  private wait(keys: LockKeys, owner: string, lease: number, watchdog: boolean, deadline: number, start: number, signal: AbortSignal | undefined): Promise<Hold | null> {
    return new Promise<Hold | null>((resolve, reject) => {
      let queue = this.queues.get(keys.key);
      if (!queue) this.queues.set(keys.key, (queue = new WaitQueue(keys)));
      const q = queue;
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => waiter.reject(signal?.reason);
      const finish = () => {
        waiter.settled = true;
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        q.remove(waiter);
        q.wake();
      };
      const waiter: Waiter = {
        owner,
        lease,
        watchdog,
        deadline,
        start,
        claimed: false,
        settled: false,
        resolve: (hold) => {
          if (waiter.settled) return;
          finish();
          resolve(hold);
        },
        reject: (error) => {
          if (waiter.settled) return;
          finish();
          reject(error);
        },
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (deadline < Infinity) timer = setTimeout(() => waiter.resolve(null), Math.max(0, deadline - now()));
      q.add(waiter);
      if (!q.pumping) void this.pump(q);
      else q.wake(); // a lingering pump picks it up at once
    });
  }

  /** Waits for the lock on behalf of the queue's head until the queue is empty. */
  private async pump(queue: WaitQueue): Promise<void> {
    const { keys } = queue;
    queue.pumping = true;
    let failure: unknown;
    try {
      // Subscribe before the retry, so a release between the two is not missed.
      await this.backend.subscribe(keys.channel, () => {
        // Someone released: the yield window has served its purpose.
        this.yields.delete(keys.key);
        queue.wake();
      });
      while (!this.closed) {
        if (queue.idle) {
          await queue.sleep(LINGER);
          if (queue.idle) break;
          continue;
        }
        const head = queue.next();
        if (!head || this.holds.heldByOther(keys.key, head.owner)) {
          // A hand-off is under way, or a local owner will hand the lock over: the
          // release, a loss or a leaving waiter wakes us.
          await queue.sleep(Infinity);
          continue;
        }
        if (this.yielding(keys.key)) {
          await queue.sleep(this.yields.get(keys.key)! - now());
          continue;
        }
        head.claimed = true;
        let result: AcquireResult;
        try {
          result = await this.backend.acquire(keys, head.owner, head.lease, this.timeoutFor(head.lease), levelsOf(this.holdOf(keys.key, head.owner)));
        } catch (error) {
          head.claimed = false;
          head.reject(error);
          continue;
        }
        head.claimed = false;
        if (result.granted) {
          if (head.settled) this.undo(keys, head.owner, false);
          else head.resolve(this.register(keys, head.owner, head.lease, head.watchdog, result, head.start));
          continue;
        }
        if (head.settled) continue;
        // pttl -1: held without expiry, only a release message wakes us; -2: just freed.
        const ttl = result.pttl === -1 ? Infinity : Math.max(0, result.pttl);
        await queue.sleep(Math.min(ttl, head.deadline - now()));
      }
    } catch (error) {
      failure = error;
      this.emit('error', error instanceof Error ? error : new Error(String(error)));
    } finally {
      queue.pumping = false;
      if (this.queues.get(keys.key) === queue) this.queues.delete(keys.key);
      if (!queue.idle) {
        const reason = this.closed ? new LockError('client closed') : new LockError(`waiting for '${keys.name}' failed`, { cause: failure, lockName: keys.name });
        for (const waiter of [...queue.waiters]) waiter.reject(reason);
      }
      await this.backend.unsubscribe(keys.channel).catch(() => undefined);
    }
  }

  // ---- events ---------------------------------------------------------------------

  /** Someone listens for event about name: only then is its payload built (hot path). */
  private wants(event: keyof LockEvents, name: string): boolean {
    return this.listenerCount(event) > 0 || (this.perName.get(name)?.listenerCount(event) ?? 0) > 0;
  }

  private publish<E extends keyof LockEvents>(event: E, name: string, payload: Parameters<LockEvents[E]>[0]): void {
    // A throwing listener must not break the lock's bookkeeping; it is reported as 'error'.
    try {
      (this.emit as (e: string, p: unknown) => boolean)(event, payload);
      (this.perName.get(name)?.emit as ((e: string, p: unknown) => boolean) | undefined)?.call(this.perName.get(name), event, payload);
    } catch (error) {
      this.emit('error', error instanceof Error ? error : new Error(String(error)));
    }
  }
}

/** Levels an owner holds as far as this client knows: the scripts apply a call only once by it (see Backend). */
function levelsOf(hold: Hold | undefined): number {
  return hold && !hold.lost ? hold.count : 0;
}
