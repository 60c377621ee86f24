import { HOLDER_CHANNEL } from '../store/scripts/release.js';
import { writeHoldId } from '../store/name-keys.js';
import type { Store } from '../store/types.js';
import type { EventHub } from './event-hub.js';
import type { HoldRegistry } from './registry.js';

/**
 * The client's holder channel (store/scripts/_holders.lua): requestRelease asks its holds
 * to let go on it, forceUnlock tells them they are deleted. One channel per client, so one
 * subscription per master, taken without waiting when the client first holds something
 * (lock() and unlock() never pay a round trip for it) and dropped with the client's other
 * subscriptions at close(). Nothing rests on it: a request missed while it is broken is
 * just missed, and a missed deletion is found by the hold's next renewal (the key is gone).
 */
export class HolderChannel {
  private channel: string | undefined;

  constructor(
    private readonly store: Store,
    private readonly holds: HoldRegistry,
    private readonly events: EventHub,
  ) {}

  /** The client holds something now (`owner`, one of its owner ids): listen, once. */
  watch(owner: string): void {
    if (this.channel !== undefined) return;
    // Owner ids are host:pid:clientId:scope; the scripts name the channel after the part up to the last ':'.
    this.channel = HOLDER_CHANNEL + owner.slice(0, owner.lastIndexOf(':') + 1);
    // Plain SUBSCRIBE: the scripts PUBLISH from any slot (see _holders.lua).
    this.store.subscribe(this.channel, (message) => message === undefined || this.heard(message), true).catch(() => undefined);
  }

  /** `verb owner id`: the id may hold spaces (it is a key), owner ids hold none. */
  private heard(message: string): void {
    const a = message.indexOf(' ');
    const b = message.indexOf(' ', a + 1);
    if (a < 0 || b < 0) return;
    this.noticed(message.slice(0, a), message.slice(a + 1, b), message.slice(b + 1));
  }

  /**
   * A hold of this client was asked to let go (`revoke`), or its key was deleted under it
   * (`deleted`: lost now rather than at its next renewal). A notice about a hold this
   * client no longer has is stale and ignored. A notice about a lock hash (getLock's:
   * `holdfast release NAME` cannot tell which kind took the hash) also reaches a
   * read-write lock's write hold kept in it.
   */
  private noticed(verb: string, owner: string, id: string): void {
    const hold = this.holds.get(id, owner) ?? this.holds.get(writeHoldId(id), owner);
    if (!hold) return;
    if (verb === 'deleted') {
      hold.lose('deleted');
      return;
    }
    if (verb !== 'revoke') return;
    const error = hold.revoke();
    const { name } = hold.keys;
    if (error) this.events.publish('revokeRequested', name, () => ({ name, owner, kind: hold.primitive.kind, error }));
  }
}
