import { isFinal } from '../errors/final.js';
import { LockError } from '../errors/LockError.js';
import { safety } from '../store/lease-margin.js';
import type { Granted, LockKeys, Refused } from '../store/types.js';
import { raceAbort } from '../util/abort.js';
import { Background } from '../util/background.js';
import { SUBSCRIPTION_LINGER, backoff } from './backoff.js';
import type { Hold } from './hold.js';
import type { AcquireRequest, WaitHost } from './request.js';
import { unavailable } from './unavailable.js';
import { Bell } from './wait-queue.js';

const now = () => performance.now();

/**
 * This client's fair waiters of one key: their owner ids -> wake-ups, behind the key's
 * wake-up channel ('*' for every waiter) and this client's own one (messages naming one
 * of its owners: scripts/_notify.lua wakeOwner), subscribed and dropped together.
 */
interface Watchers {
  readonly owners: Map<string, Set<() => void>>;
  readonly ready: Promise<unknown>;
  readonly channels: readonly [string, string];
  /** Set while nobody waits: the subscription is dropped when it fires. */
  linger?: NodeJS.Timeout;
}

/** A fair wait under way: for leaveAll(), and for a release's grant that names it. */
interface QueuedWait {
  readonly request: AcquireRequest;
  /** Its id in the queue's tickets (scripts/_passOn.lua): 'w' and a number, unique in this client. */
  readonly id: string;
  left: boolean;
  /** The token of a grant a release made to this wait, from its message (or this client's release reply), not yet taken up. */
  granted?: number;
  readonly ring: () => void;
}

/**
 * Waits of the fair lock: the owner joins the queue in Redis, and each retry doubles
 * as its heartbeat (at least every third of the heartbeat lease), so a live waiter is
 * never dropped and a dead one leaves within one heartbeat lease. A release gives the
 * lock to the head, or wakes only the head (the message names it); see wait() for when
 * a grant's message is taken up. A waiter that gives up leaves the queue at once (and
 * gives back a grant it never took up). Failed attempts are retried with backoff until
 * the wait ends. The same waits serve the semaphore and the read-write lock, which only
 * wake.
 */
export class FairWaits {
  private readonly watchers = new Map<string, Watchers>();
  /** Waits under way (in their queue or about to join it) by id, and whether their leave was sent. */
  private readonly queued = new Map<string, QueuedWait>();
  private lastWaitId = 0;
  /** Leaves sent, tracked for leaveAll(). */
  private readonly leaving = new Background();

  constructor(
    private readonly host: WaitHost,
    /** Lease of a queue entry: a waiter that stops renewing it (a dead process) leaves the queue after this. */
    private readonly heartbeat: number,
  ) {}

  /**
   * The client is closing: every waiter leaves its queue now, before close() rejects the
   * waits (a leave sent as a wait ends would come after close() resolved, when the user
   * may close the connection). Resolves once those leaves have settled (each bounded).
   * An attempt still out was sent before its leave, on the same connection: the leave
   * removes what it joined.
   */
  leaveAll(): Promise<void> {
    for (const wait of this.queued.values()) this.leave(wait);
    return this.leaving.settled();
  }

  /** Sends the waiter's leave, once. */
  private leave(wait: QueuedWait): void {
    if (wait.left) return;
    wait.left = true;
    const { request } = wait;
    const host = this.host;
    const sent = request.primitive.leave?.(host.store, request.keys, request.owner, host.timeoutFor(request.lease), wait.id);
    // Closing, the connection may be gone first (the user closes it after close()): the
    // entry then expires with its lease, as a local waiting list's does.
    if (sent) this.leaving.track(sent.catch((e: unknown) => host.closed || host.error(e)));
  }

  /** Wakes every fair waiter (the client is closing: each then rejects) and ends every linger. */
  wakeAll(): void {
    for (const [id, entry] of this.watchers) {
      for (const wakes of entry.owners.values()) for (const wake of wakes) wake();
      if (entry.linger) this.drop(id, entry);
    }
  }

  async wait(request: AcquireRequest, lastError?: unknown): Promise<Hold | null> {
    const { keys, owner, signal, deadline } = request;
    const host = this.host;
    const bell = new Bell();
    const ring = () => bell.wake();
    const queued: QueuedWait = { request, id: `w${(++this.lastWaitId).toString(36)}`, left: false, ring };
    // A waiter holds no level yet (a reentry never waits here).
    const attempt = () => {
      const call = request.primitive.attempt(host.store, keys, owner, request.lease, 0, host.timeoutFor(request.lease), true, queued.id);
      return raceAbort(call, signal, (late) => late.granted && host.giveBack(request));
    };
    signal?.addEventListener('abort', ring);
    this.queued.set(queued.id, queued);
    let unwatch: (() => void) | undefined;
    let granted: Granted | undefined;
    let failures = lastError === undefined ? 0 : 1;
    let attempted = false;
    // The wait's last refused attempt: when it was sent, and the name's last token when
    // it ran. A grant with a higher token was made after that attempt ran, so after its
    // send, from which its lease is counted; one with a token not above it was made
    // before and no longer stood then (an attempt would have taken it), so it is stale:
    // given back, expired, or undone. After a failed attempt (which may have taken a
    // grant in Redis that is then given back for it, store/master/exactly-once.ts) no
    // grant is taken up until an attempt is refused again.
    let refusal: { sentAt: number; counter: number } | undefined;
    // Whether the grant a message brought may be taken up now; a stale one is dropped here.
    const usable = (): boolean => {
      if (queued.granted === undefined || refusal === undefined) return false;
      if (queued.granted > refusal.counter) return true;
      queued.granted = undefined;
      return false;
    };
    try {
      // Subscribed already (another waiter, or a linger): watched before the first
      // attempt, which then needs no second one after a refusal.
      if (this.watchers.has(keys.id)) unwatch = await this.watch(keys, owner, ring);
      for (;;) {
        if (host.closed) {
          // Rejected when the client's close() rejects waits (see WaitHost.rejectingWaits).
          await host.rejectingWaits;
          throw new LockError('client closed');
        }
        signal?.throwIfAborted();
        // The wait ends with its last outcome: held by another owner (null), or the failure.
        if (attempted && !usable() && deadline - now() <= 0) {
          if (lastError !== undefined) throw unavailable(keys.name, lastError);
          return null;
        }
        attempted = true;
        let result: Granted | Refused;
        try {
          if (refusal && usable()) {
            result = takeUp(queued, refusal.sentAt);
          } else {
            const sentAt = now();
            refusal = undefined;
            result = await attempt();
            if (!result.granted) {
              refusal = { sentAt, counter: result.counter ?? Infinity };
              // Granted while this attempt was out, after it ran.
              if (usable()) result = takeUp(queued, sentAt);
            }
          }
          // Read after its lease ran out, host.grant() gives it back and throws: a failed attempt.
          if (result.granted) {
            queued.granted = undefined;
            const hold = host.grant(request, result);
            granted = result;
            return hold;
          }
        } catch (error) {
          // No refusal stands now (see `refusal`): a grant still there goes to the next
          // attempt, or back with the leave.
          refusal = undefined;
          if (signal?.aborted) throw signal.reason;
          if (isFinal(error)) throw error;
          failures += 1;
          lastError = error;
          host.blocked(request);
          host.failed(request, error, failures);
          await bell.sleep(Math.min(backoff(failures), deadline - now()));
          continue;
        }
        failures = 0;
        lastError = undefined;
        host.blocked(request);
        if (!unwatch) {
          // Subscribed before the retry: a release between the two is not missed.
          // Uncontended, the first attempt was the only round trip.
          unwatch = await this.watch(keys, owner, ring);
          continue;
        }
        const ttl = result.pttl === -1 ? Infinity : Math.max(0, result.pttl);
        await bell.sleep(Math.min(this.heartbeat / 3, result.head ? ttl : Infinity, deadline - now()));
      }
    } finally {
      signal?.removeEventListener('abort', ring);
      unwatch?.();
      this.queued.delete(queued.id);
      if (!granted) this.leave(queued);
    }
  }

  /** One subscription per key to the fair channel, shared by this client's fair waiters. */
  private async watch(keys: LockKeys, owner: string, wake: () => void): Promise<() => void> {
    let entry = this.watchers.get(keys.id);
    if (!entry) {
      const owners = new Map<string, Set<() => void>>();
      const dispatch = (next: string) => {
        if (next === '*') for (const wakes of owners.values()) for (const w of wakes) w();
        else if (next.includes(' ')) this.granted(next);
        else for (const w of owners.get(next) ?? []) w();
      };
      const channels = [keys.fairChannel, ownChannel(keys.fairChannel, owner)] as const;
      const ready = Promise.all(channels.map((channel) => this.host.store.subscribe(channel, dispatch)));
      this.watchers.set(keys.id, (entry = { owners, ready, channels }));
    }
    clearTimeout(entry.linger);
    entry.linger = undefined;
    const { owners, ready } = entry;
    let wakes = owners.get(owner);
    if (!wakes) owners.set(owner, (wakes = new Set()));
    wakes.add(wake);
    const mine = entry;
    await ready;
    return () => {
      wakes.delete(wake);
      if (wakes.size === 0) owners.delete(owner);
      if (owners.size > 0 || this.watchers.get(keys.id) !== mine) return;
      if (this.host.closed) this.drop(keys.id, mine);
      else mine.linger = setTimeout(() => this.drop(keys.id, mine), SUBSCRIPTION_LINGER);
    };
  }

  /**
   * A release granted the lock to a wait: 'owner wait token' (owner ids hold no white
   * space), from its message, or from the reply of this client's own release (the head
   * may be one of its waits). Not a wait of this client's, or one that has ended (it
   * gave the grant back with its leave, or took it with an attempt, or took it from the
   * other of the two): dropped.
   */
  granted(message: string): void {
    const [owner, id, token] = message.split(' ');
    const wait = this.queued.get(id);
    if (!wait || wait.request.owner !== owner || wait.left) return;
    wait.granted = Number(token);
    wait.ring();
  }

  /** Drops a key's subscription nobody waits on. */
  private drop(id: string, entry: Watchers): void {
    clearTimeout(entry.linger);
    entry.linger = undefined;
    if (entry.owners.size > 0 || this.watchers.get(id) !== entry) return;
    this.watchers.delete(id);
    for (const channel of entry.channels) this.host.store.unsubscribe(channel).catch(() => undefined);
  }
}

/** The grant a wait's message brought: its lease counted from `floor`, a send before the grant (see FairWaits.wait). */
function takeUp(wait: QueuedWait, floor: number): Granted {
  const { lease } = wait.request;
  return { granted: true, token: wait.granted ?? 0, validUntil: floor + lease - safety(lease) };
}

/**
 * The channel on which releases name this client's owners: the wake-up channel, ':', and
 * the owner id up to its last ':' (host:pid:client:, the same for every owner of a
 * client; scripts/_notify.lua wakeOwner derives it alike).
 */
function ownChannel(channel: string, owner: string): string {
  return `${channel}:${owner.slice(0, owner.lastIndexOf(':') + 1) || owner}`;
}
