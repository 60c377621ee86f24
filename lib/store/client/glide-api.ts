/** What the GLIDE adapter (glide.ts, glide-pubsub.ts) uses of GLIDE, typed here so that holdfast's types import nothing from it. */

/** GLIDE's `Decoder.String`: replies as strings whatever the user's `defaultDecoder`. */
export const STRING = 1;

export type Route = { type: 'primarySlotKey'; key: string } | 'randomNode' | 'allPrimaries';
export type Options = { decoder: number; route?: Route };
export interface PubSubMsg {
  channel: unknown;
  message: unknown;
}
export interface PubSubState {
  actualSubscriptions: Record<string, Set<unknown> | undefined>;
}

/** The members the adapter uses, as GLIDE 2.3+ has them (standalone and cluster alike, unless noted). */
export interface Glide {
  customCommand(args: string[], options?: Options): Promise<unknown>;
  /** Run-time (un)subscription, blocking until the server confirmed it (2.3 on). */
  subscribe?(channels: Set<string>, timeoutMs: number): Promise<void>;
  unsubscribe(channels: Set<string>, timeoutMs: number): Promise<void>;
  /** Only a cluster client has the sharded ones. */
  ssubscribe?(channels: Set<string>, timeoutMs: number): Promise<void>;
  sunsubscribe?(channels: Set<string>, timeoutMs: number): Promise<void>;
  getSubscriptions(): Promise<PubSubState>;
  /** Counters of GLIDE's core, process-wide; total_connections: connections open now. */
  getStatistics(): object;
  close(message?: string): void;
  /** Set by close() (a protected field of GLIDE's BaseClient, not in its types). */
  readonly isClosed?: boolean;
  /** The configuration the client was created with (private in GLIDE's types): holdfast's pub/sub connection copies it. */
  readonly config?: Record<string, unknown>;
  /** Only a cluster client has it. */
  fcallWithRoute?: unknown;
}

/** The class of a GLIDE client: `createClient` makes another like it. */
export interface GlideClass {
  createClient(config: Record<string, unknown>): Promise<Glide>;
}
