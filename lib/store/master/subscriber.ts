import type { PubSubPort, RedisClientPort } from '../client/redis-client.js';
import { withTimeout } from '../../util/timeout.js';

type Listener = (message: string) => void;

/**
 * How long drop() may spend unsubscribing on the server before close() closes the
 * connection anyway (a stalled server; a server known to be down is not asked).
 */
const CLOSE_BOUND = 1_000;

/**
 * One pub/sub connection per master, opened on the first wait and duplicated from
 * the user's connection. Channels are subscribed while someone waits on them and
 * dropped when the last waiter leaves; operations on one channel run in order, so a
 * quick subscribe/unsubscribe/subscribe ends subscribed. drop() unsubscribes what is
 * still subscribed, before close() closes the connection: once it resolves, the server
 * holds no subscription of this client (closing the socket drops them too, but a
 * moment later, and through a stalled network not at all).
 */
export class Subscriber {
  private connection: PubSubPort | undefined;
  private sharded = false;
  private readonly listeners = new Map<string, Listener>();
  private readonly queues = new Map<string, Promise<boolean>>();
  /** Channels the server confirmed and that were not unsubscribed since. */
  private readonly live = new Set<string>();
  private closing = false;
  private closed = false;

  constructor(private readonly source: RedisClientPort) {}

  /** Resolves once subscribed, or after `timeout` (waiters then fall back to the lock's TTL). */
  subscribe(channel: string, listener: Listener, timeout: number): Promise<void> {
    this.listeners.set(channel, listener);
    return this.enqueue(channel, timeout, async (c) => {
      if (!this.listeners.has(channel) || this.closing) return;
      await this.command(c, 'subscribe', channel);
      this.live.add(channel);
    }).then((ok) => {
      // Refused or timed out: waiters fall back to the lock's TTL meanwhile, but a later
      // try must not be left to chance (nothing else would subscribe this channel again).
      if (!ok && !this.closed && this.listeners.get(channel) === listener) {
        setTimeout(() => {
          if (!this.closed && this.listeners.get(channel) === listener) void this.subscribe(channel, listener, timeout);
        }, 100).unref();
      }
    });
  }

  async unsubscribe(channel: string, timeout: number): Promise<void> {
    this.listeners.delete(channel);
    await this.enqueue(channel, timeout, async (c) => {
      // Closing, drop() has unsubscribed every live channel already.
      if (this.listeners.has(channel) || (this.closing && !this.live.has(channel))) return;
      await this.command(c, 'unsubscribe', channel);
      this.live.delete(channel);
    });
  }

  get channels(): number {
    return this.listeners.size;
  }

  /** Takes no new subscription and unsubscribes what the server still has (bounded by CLOSE_BOUND). */
  async drop(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const c = this.connection;
    if (!c || this.source.down) return;
    // Operations under way first (each bounded), then what is still subscribed.
    const dropped = Promise.all(this.queues.values()).then(() =>
      Promise.all([...this.live].map(async (channel) => {
        await this.command(c, 'unsubscribe', channel);
        this.live.delete(channel);
      })),
    );
    await withTimeout(dropped, CLOSE_BOUND, 'pub/sub close').catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.closed = true;
    this.listeners.clear();
    this.live.clear();
    const c = this.connection;
    this.connection = undefined;
    // Closed at once, not by QUIT: a dead server must not hold close() up.
    c?.close();
  }

  /** Runs op after the channel's earlier ops; resolves false when it failed or timed out. */
  private enqueue(channel: string, timeout: number, op: (c: PubSubPort) => Promise<void>): Promise<boolean> {
    const previous = this.queues.get(channel) ?? Promise.resolve(true);
    const next = previous.then(async () => {
      if (this.closed) return true;
      return withTimeout(op(this.open()), timeout, `pub/sub on ${channel}`).then(
        () => true,
        () => false,
      );
    });
    this.queues.set(channel, next);
    void next.then(() => {
      if (this.queues.get(channel) === next) this.queues.delete(channel);
    });
    return next;
  }

  private async command(c: PubSubPort, verb: 'subscribe' | 'unsubscribe', channel: string): Promise<void> {
    if (this.sharded) {
      try {
        await c[verb](channel, true);
        return;
      } catch (error) {
        // A server older than 7.0 has no sharded pub/sub; the scripts publish plainly then.
        if (!(error instanceof Error) || !/unknown command/i.test(error.message)) throw error;
        this.sharded = false;
      }
    }
    await c[verb](channel, false);
  }

  private open(): PubSubPort {
    if (this.connection) return this.connection;
    const c = this.source.subscriber((channel, message) => this.listeners.get(channel)?.(message));
    this.sharded = c.shardable;
    this.connection = c;
    return c;
  }
}
