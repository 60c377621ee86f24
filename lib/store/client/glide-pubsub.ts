import type { MessageListener, PubSubEvents, PubSubPort } from './redis-client.js';
import { STRING, type Glide, type GlideClass, type PubSubMsg } from './glide-api.js';

/** How often holdfast's pub/sub connection is asked whether its subscriptions stand (GLIDE tells of no break). */
const SUBSCRIPTION_CHECK = 100;

/** Bound GLIDE puts on one (S)SUBSCRIBE's confirmation; the Subscriber bounds it more tightly. */
const SUBSCRIBE_TIMEOUT = 10_000;

/** holdfast's own GLIDE client for pub/sub (see GlideClient). */
export class GlidePubSub implements PubSubPort {
  readonly shardable: boolean;
  private client: Promise<Glide> | undefined;
  private closed = false;
  /** Channels the server confirmed and that are not being unsubscribed, each with whether it is sharded. */
  private readonly confirmed = new Map<string, boolean>();
  private broken = false;
  private readonly check: ReturnType<typeof setInterval>;
  /** Whether the server has (S)SUBSCRIBE, by command, once asked. */
  private readonly commands = new Map<string, Promise<void>>();

  constructor(
    private readonly source: Glide,
    cluster: boolean,
    private readonly onMessage: MessageListener,
    private readonly events: PubSubEvents,
  ) {
    this.shardable = cluster;
    this.check = setInterval(() => void this.checkSubscriptions(), SUBSCRIPTION_CHECK);
    this.check.unref();
  }

  /** The connection, made on first use and made again when making it failed (a server down then). */
  private connection(): Promise<Glide> {
    if (this.client) return this.client;
    const config = {
      ...this.source.config,
      // The user's subscriptions (if any) are not holdfast's; GLIDE calls back with every message.
      pubsubSubscriptions: { channelsAndPatterns: {}, callback: (msg: PubSubMsg) => this.onMessage(String(msg.channel), String(msg.message)) },
    };
    const made = (this.source.constructor as unknown as GlideClass).createClient(config);
    this.client = made;
    made.then(
      (c) => void (this.closed && c.close()),
      () => {
        if (this.client === made) this.client = undefined;
      },
    );
    return made;
  }

  async subscribe(channel: string, sharded: boolean): Promise<void> {
    const c = await this.connection();
    if (this.closed) throw new Error('holdfast: pub/sub connection closed');
    await this.known(c, sharded ? 'SSUBSCRIBE' : 'SUBSCRIBE');
    const channels = new Set([channel]);
    await (sharded && c.ssubscribe ? c.ssubscribe(channels, SUBSCRIBE_TIMEOUT) : c.subscribe?.(channels, SUBSCRIBE_TIMEOUT));
    this.confirmed.set(channel, sharded);
  }

  /**
   * Rejects as the server would, with 'unknown command', when it lists no `command`
   * (renamed away, disabled): GLIDE keeps a refused (S)SUBSCRIBE to itself and lets it
   * time out, and the Subscriber must know to poll instead. Asked once per command.
   */
  private known(c: Glide, command: string): Promise<void> {
    let known = this.commands.get(command);
    if (!known) {
      known = c.customCommand(['COMMAND', 'INFO', command], { decoder: STRING, ...(this.shardable ? { route: 'randomNode' as const } : {}) }).then((reply) => {
        if (Array.isArray(reply) && reply[0] === null) throw new Error(`ERR unknown command '${command}' (the server lists no such command)`);
      });
      // Asked again next time unless the server answered.
      known.catch(() => this.commands.get(command) === known && this.commands.delete(command));
      this.commands.set(command, known);
    }
    return known;
  }

  async unsubscribe(channel: string, sharded: boolean): Promise<void> {
    this.confirmed.delete(channel);
    // Never made, or closed: it is subscribed to nothing.
    if (!this.client || this.closed) return;
    const c = await this.client;
    if (this.closed) return;
    const channels = new Set([channel]);
    await (sharded && c.sunsubscribe ? c.sunsubscribe(channels, SUBSCRIBE_TIMEOUT) : c.unsubscribe(channels, SUBSCRIBE_TIMEOUT));
  }

  /** broken when a confirmed channel is missing from what the server has; restored once all are back. */
  private async checkSubscriptions(): Promise<void> {
    if (this.confirmed.size === 0 || !this.client || this.closed) return;
    let missing: boolean;
    try {
      const state = await (await this.client).getSubscriptions();
      const exact = state.actualSubscriptions['0'];
      const shard = state.actualSubscriptions['2'];
      missing = [...this.confirmed].some(([channel, sharded]) => !(sharded ? shard : exact)?.has(channel));
    } catch {
      missing = true;
    }
    if (this.closed || missing === this.broken) return;
    this.broken = missing;
    if (missing) this.events.broken();
    else this.events.restored();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.check);
    this.client?.then(
      (c) => c.close(),
      () => undefined,
    );
  }
}
