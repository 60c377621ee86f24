import type { LockKeys } from '../store/types.js';
import { SUBSCRIPTION_LINGER } from './backoff.js';
import type { Bell } from './bell.js';
import type { AcquireRequest, WaitHost } from './request.js';

/** A wait under way: for leaveAll(), for a release's grant that names it, and for its key's line. */
export interface Wait {
  readonly request: AcquireRequest;
  /** Its id in the queue's tickets (scripts/_queue.lua): 'w' and a number, unique in this client. */
  readonly id: string;
  /** An attempt of it was refused, or one is out: it has (or may take) a place in the queue. */
  joined: boolean;
  /** Its attempt out (sent, not answered), which settles after giving back a grant that comes once the wait is over. */
  out?: Promise<unknown>;
  /** Its leave was sent. */
  left: boolean;
  /** It sleeps until this client's unlock of its key has ended (see Waits.wait). */
  behindRelease?: boolean;
  /** The token of a grant a release made to this wait, from its message (or this client's release reply), not yet taken up. */
  granted?: number;
  /** What dates that grant against the wait's last refusal when it is not its token (a read-write lock's stamp). */
  stamp?: number;
  readonly bell: Bell;
}

/**
 * This client's waits on one key: their owner ids -> waits, behind the key's channels
 * (subscribed and dropped together), and, for waits 'client', the line in which they
 * ask one at a time, oldest first.
 */
export interface KeyWatch {
  readonly owners: Map<string, Set<Wait>>;
  readonly line: Wait[];
  readonly channels: readonly string[];
  readonly dispatch: (message: string | undefined) => void;
  /** Subscribed (or given up on, bounded): made by the first wait refused, shared by the others. */
  ready?: Promise<unknown>;
  /** Set while nobody waits: the subscription is dropped when it fires. */
  linger?: NodeJS.Timeout;
}

/**
 * This client's waits, per key: who waits on it, its line (waits 'client'), and its
 * subscription (made by the first wait refused, shared by the others, lingering
 * SUBSCRIPTION_LINGER after the last, dropped at once when the client closes). Messages
 * on the key's channels wake the waits they name (engine/waits.ts says which).
 */
export class KeyWatches {
  private readonly watches = new Map<string, KeyWatch>();

  constructor(
    private readonly host: Pick<WaitHost, 'store' | 'closed'>,
    /** A release's grant message ('owner wait token'), for the wait it names. */
    private readonly granted: (message: string) => void,
  ) {}

  /** This client watches the key (a wait on it, or its subscription lingering). */
  has(keyId: string): boolean {
    return this.watches.has(keyId);
  }

  /** Waits 'client' of this key are lined up in this client. */
  lined(keyId: string): boolean {
    return (this.watches.get(keyId)?.line.length ?? 0) > 0;
  }

  /** The first in the key's line (waits 'client'). */
  first(keyId: string): Wait | undefined {
    return this.watches.get(keyId)?.line[0];
  }

  /** Wakes the waits of the key that wait for this client's unlock of it, or hold a grant that came meanwhile. */
  wakeBehindRelease(keyId: string): void {
    for (const waits of this.watches.get(keyId)?.owners.values() ?? []) for (const wait of waits) if (wait.behindRelease || wait.granted !== undefined) wait.bell.wake();
  }

  /** Wakes every wait (the client is closing) and ends every linger. */
  wakeAll(): void {
    for (const [id, watch] of this.watches) {
      for (const waits of watch.owners.values()) for (const wait of waits) wait.bell.wake();
      if (watch.linger) this.drop(id, watch);
    }
  }

  /**
   * The key's watch, made for its first wait (its channels are subscribed once a wait is
   * refused): the primitive's channel, and for waits 'queue' this client's own channel under it.
   */
  join(keys: LockKeys, owner: string, wait: Wait): KeyWatch {
    let watch = this.watches.get(keys.id);
    if (!watch) {
      const owners = new Map<string, Set<Wait>>();
      const line: Wait[] = [];
      const queued = wait.request.primitive.waits === 'queue';
      const dispatch = (message: string | undefined) => {
        // The subscription broke (messages may be lost), or a release freed the lock for everyone.
        if (message === undefined || message === '*') for (const waits of owners.values()) for (const w of waits) w.bell.wake();
        else if (message === 'released') line[0]?.bell.wake();
        else if (message.includes(' ')) this.granted(message);
        else for (const w of owners.get(message) ?? []) w.bell.wake();
      };
      const channels = queued ? [keys.wakeChannel, ownChannel(keys.wakeChannel, owner)] : [keys.channel];
      this.watches.set(keys.id, (watch = { owners, line, channels, dispatch }));
    }
    clearTimeout(watch.linger);
    watch.linger = undefined;
    let waits = watch.owners.get(owner);
    if (!waits) watch.owners.set(owner, (waits = new Set()));
    waits.add(wait);
    return watch;
  }

  /** Subscribes the key's channels, once per watch. */
  subscribe(watch: KeyWatch): Promise<unknown> {
    return (watch.ready ??= Promise.all(watch.channels.map((channel) => this.host.store.subscribe(channel, watch.dispatch))));
  }

  /** The wait ended: it leaves its key's watch and line; the last one leaves the subscription lingering. */
  leave(keys: LockKeys, owner: string, wait: Wait, watch: KeyWatch): void {
    const waits = watch.owners.get(owner);
    waits?.delete(wait);
    if (waits?.size === 0) watch.owners.delete(owner);
    const at = watch.line.indexOf(wait);
    if (at >= 0) {
      watch.line.splice(at, 1);
      if (at === 0) watch.line[0]?.bell.wake();
    }
    if (watch.owners.size > 0 || this.watches.get(keys.id) !== watch) return;
    // Never subscribed (its waits were granted at once): nothing to linger for.
    if (this.host.closed || !watch.ready) this.drop(keys.id, watch);
    else watch.linger = setTimeout(() => this.drop(keys.id, watch), SUBSCRIPTION_LINGER);
  }

  /** Drops a key's subscription nobody waits on. */
  private drop(id: string, watch: KeyWatch): void {
    clearTimeout(watch.linger);
    watch.linger = undefined;
    if (watch.owners.size > 0 || this.watches.get(id) !== watch) return;
    this.watches.delete(id);
    if (watch.ready) for (const channel of watch.channels) this.host.store.unsubscribe(channel).catch(() => undefined);
  }
}

/**
 * The channel on which releases name this client's owners: the wake-up channel, ':', and
 * the owner id up to its last ':' (host:pid:client:, the same for every owner of a
 * client; scripts/_notify.lua wakeOwner derives it alike).
 */
function ownChannel(channel: string, owner: string): string {
  return `${channel}:${owner.slice(0, owner.lastIndexOf(':') + 1) || owner}`;
}

/**
 * Waits for a key's subscription (`ready`), but not past the wait's deadline, an abort
 * or a message (the wait's bell): a subscription may take its own bound (2 s) when the
 * server does not answer SUBSCRIBE (a Cluster's sharded subscriber sent to a slot's
 * former node after a migration), longer than what is left of the wait (DESIGN
 * "Waiting": waitTime plus one command bound). Whether subscribed; if not, the wait's
 * next refusal waits for the same promise again, and its deadline ends it meanwhile.
 */
export async function subscribedBy(wait: Wait, ready: Promise<unknown>, deadline: number): Promise<boolean> {
  let done = false;
  const settled = ready.then(
    () => void (done = true),
    () => void (done = true),
  );
  await wait.bell.sleep(deadline - performance.now(), settled);
  return done;
}
