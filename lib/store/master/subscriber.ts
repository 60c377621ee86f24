import type { PubSubPort, RedisClientPort } from '../client/redis-client.js';
import { withTimeout } from '../../util/timeout.js';
import { isMissingCommand } from '../missing-command.js';

/** A channel's message, or undefined when the subscription broke or came back (see Store.subscribe). */
type Listener = (message: string | undefined) => void;

/** How long the Subscriber waits before subscribing again a channel whose SUBSCRIBE failed. */
const RETRY = 100;

/**
 * How long drop() may spend unsubscribing on the server before close() closes the
 * connection anyway (a stalled server; a server known to be down is not asked).
 */
const CLOSE_BOUND = 1_000;

/**
 * Without pub/sub (the server refuses SUBSCRIBE as an unknown command), how often every
 * listener hears undefined: each wait asks again at least this often (the README's
 * promise of a bounded interval).
 */
export const POLL_INTERVAL = 200;

/**
 * One pub/sub connection per master, opened on the first wait and duplicated from
 * the user's connection. Channels are subscribed while someone waits on them and
 * dropped when the last waiter leaves; operations on one channel run in order, so a
 * quick subscribe/unsubscribe/subscribe ends subscribed. drop() unsubscribes what is
 * still subscribed, before close() closes the connection: once it resolves, the server
 * holds no subscription of this client (closing the socket drops them too, but a
 * moment later, and through a stalled network not at all).
 *
 * A wait never rests on a subscription that broke: when the connection breaks, every
 * channel's listener is called with undefined, once per break (the waits ask again at
 * once); when the connection is back, each channel that was subscribed is subscribed
 * again (the client libraries resubscribe on their own; the confirmation of this
 * SUBSCRIBE, on the same connection, comes after theirs) and its listener is called
 * with undefined once more, since what was published during the break is lost. A
 * subscription confirmed only after its first SUBSCRIBE timed out calls its listener
 * with undefined too (the wait went ahead without it meanwhile).
 *
 * A server without pub/sub (SUBSCRIBE refused as an unknown command: a proxy or a
 * managed service that disables it) is known from then on: the connection is closed,
 * nothing is subscribed any more, and while anyone listens every listener hears
 * undefined each POLL_INTERVAL, so waits ask again at that pace. Said once (per client
 * and master) by a process warning, HOLDFAST_NO_PUBSUB.
 */
export class Subscriber {
  private connection: PubSubPort | undefined;
  private sharded = false;
  private readonly listeners = new Map<string, Listener>();
  private readonly queues = new Map<string, Promise<boolean>>();
  /** Channels the server confirmed and that were not unsubscribed since. */
  private readonly live = new Set<string>();
  /** Channels subscribed with plain SUBSCRIBE even on a sharded connection (see subscribe). */
  private readonly plain = new Set<string>();
  private closing = false;
  private closed = false;
  /** The connection broke and is not back yet: listeners were told once. */
  private broken = false;
  /** The bound of the last subscribe(), for the resubscriptions after a break. */
  private bound = 2_000;
  /** The server has no pub/sub: listeners are polled instead (see the class comment). */
  private polling = false;
  private poll: NodeJS.Timeout | undefined;

  constructor(private readonly source: RedisClientPort) {}

  /**
   * Resolves once subscribed, or after `timeout` (waiters then go on without it, and
   * the listener hears undefined once it is subscribed after all). `plain`: SUBSCRIBE, not
   * SSUBSCRIBE, on a sharded connection: for a channel that scripts on keys of any slot
   * PUBLISH to (a script may SPUBLISH only to a channel of its own keys' slot).
   */
  subscribe(channel: string, listener: Listener, timeout: number, plain = false): Promise<void> {
    if (plain) this.plain.add(channel);
    return this.trySubscribe(channel, listener, timeout, false);
  }

  /** `late`: a retry after a failed try, confirmed after the wait went on without it. */
  private trySubscribe(channel: string, listener: Listener, timeout: number, late: boolean): Promise<void> {
    this.listeners.set(channel, listener);
    this.bound = timeout;
    if (this.polling) return Promise.resolve(this.polled());
    return this.enqueue(channel, timeout, async (c) => {
      if (!this.listeners.has(channel) || this.closing || this.polling) return;
      try {
        await this.command(c, 'subscribe', channel);
      } catch (error) {
        if (!isMissingCommand(error)) throw error;
        return this.withoutPubSub(error);
      }
      this.live.add(channel);
    }).then((ok) => {
      if (this.closed || this.listeners.get(channel) !== listener) return;
      if (ok) {
        if (late && this.live.has(channel)) listener(undefined);
        return;
      }
      // Refused or timed out: a later try must not be left to chance (nothing else would
      // subscribe this channel again).
      setTimeout(() => {
        if (!this.closed && this.listeners.get(channel) === listener) void this.trySubscribe(channel, listener, timeout, true);
      }, RETRY).unref();
    });
  }

  async unsubscribe(channel: string, timeout: number): Promise<void> {
    this.listeners.delete(channel);
    if (this.polling) return this.polled();
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
    this.polled();
    this.live.clear();
    const c = this.connection;
    this.connection = undefined;
    // Closed at once, not by QUIT: a dead server must not hold close() up.
    c?.close();
  }

  /** SUBSCRIBE was refused as unknown: polled from now on, said once; the connection is of no use. */
  private withoutPubSub(error: unknown): void {
    if (this.polling) return;
    this.polling = true;
    this.live.clear();
    this.connection?.close();
    this.connection = undefined;
    process.emitWarning(
      `the Redis server refused SUBSCRIBE (${error instanceof Error ? error.message : String(error)}): waits ask again every ${POLL_INTERVAL} ms instead of being woken by releases, and holders do not hear requests to let go. (Once per client and master.)`,
      { type: 'HoldfastWarning', code: 'HOLDFAST_NO_PUBSUB' },
    );
    this.polled();
  }

  /** Polling: the timer runs while anyone listens (each listener once per round; the channels of one key share theirs). */
  private polled(): void {
    if (this.listeners.size === 0 || this.closed) {
      clearInterval(this.poll);
      this.poll = undefined;
      return;
    }
    this.poll ??= setInterval(() => {
      for (const listener of new Set(this.listeners.values())) listener(undefined);
    }, POLL_INTERVAL).unref();
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
    if (this.sharded && !this.plain.has(channel)) {
      try {
        await c[verb](channel, true);
        return;
      } catch (error) {
        // A server older than 7.0 has no sharded pub/sub; the scripts publish plainly then.
        if (!isMissingCommand(error)) throw error;
        this.sharded = false;
      }
    }
    await c[verb](channel, false);
  }

  private open(): PubSubPort {
    if (this.connection) return this.connection;
    const c = this.source.subscriber((channel, message) => this.listeners.get(channel)?.(message), {
      broken: () => this.broke(),
      restored: () => this.restored(),
    });
    this.sharded = c.shardable;
    this.connection = c;
    return c;
  }

  /** The connection broke: every listener hears undefined, once until it is back (adapters report a break several times). */
  private broke(): void {
    if (this.broken || this.closing) return;
    this.broken = true;
    for (const listener of [...this.listeners.values()]) listener(undefined);
  }

  /** The connection is back: each channel that was subscribed is subscribed again, and its listener hears undefined once it is. */
  private restored(): void {
    if (!this.broken || this.closing) return;
    this.broken = false;
    for (const channel of this.live) this.resubscribe(channel);
  }

  /** Subscribed, and still listened to (an unsubscribe may be on its way). */
  private wanted(channel: string): boolean {
    return !this.closing && this.live.has(channel) && this.listeners.has(channel);
  }

  /** SUBSCRIBEs a live channel again (retried until confirmed or dropped), then tells its listener. */
  private resubscribe(channel: string): void {
    void this.enqueue(channel, this.bound, async (c) => {
      if (!this.wanted(channel)) return;
      await this.command(c, 'subscribe', channel);
    }).then((ok) => {
      if (!this.wanted(channel)) return;
      // Failed: a new break will resubscribe it anyway; otherwise the retry does.
      if (!ok) return void setTimeout(() => this.broken || this.resubscribe(channel), RETRY).unref();
      this.listeners.get(channel)?.(undefined);
    });
  }
}
