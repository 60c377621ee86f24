import { HOLDER_CHANNEL } from '../store/scripts/release.js';
import type { Store } from '../store/types.js';

/** What the channel says about one hold: `revoke` (asked to let go) or `deleted` (forceUnlock). */
export type HolderNotice = (verb: string, owner: string, id: string) => void;

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
    private readonly notice: HolderNotice,
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
    this.notice(message.slice(0, a), message.slice(a + 1, b), message.slice(b + 1));
  }
}
