import type { MasterStore as Master } from '../master/master.js';

/**
 * Subscribes on every master, but resolves once a majority is subscribed: a release
 * reaches at least a majority of masters, and a master that is down (its subscriber
 * connection would time out) must not hold up the waiter's first retry. Messages from
 * the masters in `muted` are dropped (QuorumStore.givenBack: our own give-backs there);
 * a master's undefined (its subscription broke or came back) always goes through.
 */
export function subscribeMajority(masters: readonly Master[], quorum: number, channel: string, listener: (message: string | undefined) => void, muted: ReadonlySet<number>, plain?: boolean): Promise<void> {
  return new Promise((resolve) => {
    let done = 0;
    const settled = () => {
      if (++done === quorum) resolve();
    };
    for (const [i, m] of masters.entries()) {
      // A master that is down cannot deliver a release: it does not hold up the
      // waiter's retries (its subscriber keeps trying on its own).
      const down = m.down;
      // A break (undefined) is passed on from every master: only messages are muted.
      void m.subscribe(channel, (message) => (message !== undefined && muted.has(i)) || listener(message), plain).then(() => down || settled());
      if (down) settled();
    }
  });
}
