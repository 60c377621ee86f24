/**
 * The client matrix: the behaviour specs make the lock's connections through these
 * helpers, of the kind HOLDFAST_CLIENT names; their admin connections (inspecting keys,
 * flushing, killing clients) stay ioredis 5. jest.config.js runs the matrix files once
 * per kind: every matrix spec for ioredis 5 (the default) and node-redis 6, the lock and
 * waiting specs for the other kinds (ioredis 6, iovalkey, node-redis 5), which share an
 * adapter with one of the first two and differ only in the library's version. Valkey
 * GLIDE, an adapter of its own, runs every matrix spec too.
 */
import Redis, { type RedisOptions } from 'ioredis';
import { Redis as Redis6, Cluster as Cluster6 } from 'ioredis6';
import Valkey, { Cluster as ValkeyCluster } from 'iovalkey';
import { createClient, createCluster } from 'redis';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import type { BaseClientConfiguration, GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import type { Connection } from '../../lib';

export const KINDS = ['ioredis', 'ioredis6', 'iovalkey', 'node-redis', 'node-redis5', 'glide'] as const;
export type ClientKind = (typeof KINDS)[number];

// jest.config.js sets the global per project; a run outside it may set the environment.
const kind = (globalThis as { HOLDFAST_CLIENT?: string }).HOLDFAST_CLIENT ?? process.env.HOLDFAST_CLIENT ?? 'ioredis';
if (!(KINDS as readonly string[]).includes(kind)) throw new Error(`HOLDFAST_CLIENT must be one of ${KINDS.join(', ')}, got ${kind}`);
/** The client library (and major version) the lock's connections use in this run. */
export const KIND = kind as ClientKind;
/** The adapter family of KIND: what a spec may rely on (ioredis's options and resends, node-redis's, or GLIDE's). */
export const CLIENT: 'ioredis' | 'node-redis' | 'glide' = KIND === 'glide' ? 'glide' : KIND.startsWith('node-redis') ? 'node-redis' : 'ioredis';

/**
 * GLIDE, loaded only in its own runs: its native module holds a handle that keeps a
 * jest run from exiting on time.
 */
const glide = (): typeof import('@valkey/valkey-glide') => require('@valkey/valkey-glide');

// GLIDE logs every error reply (each NOSCRIPT among them) to stdout unless told otherwise.
if (KIND === 'glide') glide().Logger.setLoggerConfig('off');

/**
 * GLIDE's options for the lock's connections: a constant `delay` (ms) between
 * reconnection attempts, or its default; and a request timeout above every
 * commandTimeout the specs set, so that holdfast's own bounds are what the specs see, as
 * with the other libraries, which bound no command (GLIDE's default, 250 ms, would cut a
 * paused server's reply first: spec/integration/glide.spec.ts covers that path).
 */
const glideOptions = (delay: number | undefined): Partial<BaseClientConfiguration> => ({
  requestTimeout: 10_000,
  ...(delay === undefined ? {} : { connectionBackoff: { numberOfRetries: 1, factor: Math.max(1, delay), exponentBase: 1 } }),
});

/** Options of the lock's connection that mean the same for every kind. */
export interface ConnectOptions {
  /** Milliseconds between reconnection attempts (default: the library's). */
  retryDelay?: number;
  /** More options for the ioredis family (node-redis has no equivalent of most of them). */
  ioredis?: RedisOptions;
}

type IoredisLike = new (port: number, host: string, options: RedisOptions) => Connection;
type IoredisClusterLike = new (nodes: { host: string; port: number }[]) => Connection;

function ioredisKind(): { Client: IoredisLike; Cluster: IoredisClusterLike } {
  if (KIND === 'ioredis6') return { Client: Redis6 as unknown as IoredisLike, Cluster: Cluster6 as unknown as IoredisClusterLike };
  if (KIND === 'iovalkey') return { Client: Valkey as unknown as IoredisLike, Cluster: ValkeyCluster as unknown as IoredisClusterLike };
  return { Client: Redis as unknown as IoredisLike, Cluster: Redis.Cluster as unknown as IoredisClusterLike };
}

/** The members of a node-redis client or cluster these helpers use (v5 and v6 alike). */
interface NodeRedisLike {
  on(event: 'error', listener: () => void): unknown;
  connect(): Promise<unknown>;
}
type NodeRedisFactories = { client: (options: object) => NodeRedisLike; cluster: (options: object) => NodeRedisLike };

const nodeRedis = (): NodeRedisFactories =>
  (KIND === 'node-redis5' ? { client: createClient5, cluster: createCluster5 } : { client: createClient, cluster: createCluster }) as unknown as NodeRedisFactories;

/** A connected client of the kind under test to the master on port; close it with closeConnection. */
export async function lockConnection(port: number, options: ConnectOptions = {}): Promise<Connection> {
  if (CLIENT === 'ioredis') {
    const ioOptions: RedisOptions = { ...(options.retryDelay === undefined ? {} : { retryStrategy: () => options.retryDelay }), ...options.ioredis };
    const c = new (ioredisKind().Client)(port, '127.0.0.1', ioOptions);
    (c as unknown as Redis).on('error', () => undefined);
    return c;
  }
  if (CLIENT === 'glide') {
    const c = await glide().GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port }], ...glideOptions(options.retryDelay) });
    watchGlide(c);
    return c as unknown as Connection;
  }
  const delay = options.retryDelay;
  const c = nodeRedis().client({ socket: { host: '127.0.0.1', port, ...(delay === undefined ? {} : { reconnectStrategy: () => delay }) } });
  // An unheard 'error' would throw in node-redis; the lock reports outages itself.
  c.on('error', () => undefined);
  await c.connect();
  return c as unknown as Connection;
}

/** A connected Cluster client of the kind under test. */
export async function lockCluster(startupNodes: readonly { host: string; port: number }[]): Promise<Connection> {
  if (CLIENT === 'ioredis') {
    const c = new (ioredisKind().Cluster)([...startupNodes]);
    (c as unknown as Redis).on('error', () => undefined);
    return c;
  }
  if (CLIENT === 'glide') {
    const c = await glide().GlideClusterClient.createClient({ addresses: startupNodes.map((n) => ({ host: n.host, port: n.port })), ...glideOptions(undefined) });
    watchGlide(c);
    return c as unknown as Connection;
  }
  const c = nodeRedis().cluster({ rootNodes: startupNodes.map((n) => ({ socket: { host: n.host, port: n.port } })) });
  c.on('error', () => undefined);
  await c.connect();
  return c as unknown as Connection;
}

/**
 * Whether each GLIDE connection made here answered its last PING within GLIDE_PING ms:
 * GLIDE tells nothing of its connection's state, so isReady asks the server, as the
 * adapter's own probe does. Stopped by closeConnection.
 */
const glideUp = new Map<object, { up: boolean; timer: ReturnType<typeof setInterval> }>();
const GLIDE_PING = 250;

function watchGlide(c: GlideClient | GlideClusterClient): void {
  const state = { up: true, timer: setInterval(() => ping(), 50) };
  state.timer.unref();
  const ping = () => {
    const late = setTimeout(() => (state.up = false), GLIDE_PING);
    c.customCommand(['PING']).then(
      () => {
        clearTimeout(late);
        state.up = true;
      },
      () => {
        clearTimeout(late);
        state.up = false;
      },
    );
  };
  glideUp.set(c, state);
}

/** The connection sends commands now (not into an offline queue). */
export function isReady(c: Connection): boolean {
  const any = c as unknown as { status?: string; isReady?: boolean; isClosed?: boolean };
  if (CLIENT === 'glide') return any.isClosed === false && glideUp.get(c)?.up === true;
  return CLIENT === 'ioredis' ? any.status === 'ready' : any.isReady === true;
}

/** Closes a connection made here, at once (the user's job; holdfast never closes it). */
export async function closeConnection(c: Connection): Promise<void> {
  const any = c as unknown as { disconnect?: () => unknown; destroy?: () => unknown; close?: () => unknown };
  if (CLIENT === 'ioredis') any.disconnect?.();
  else if (CLIENT === 'glide') {
    clearInterval(glideUp.get(c)?.timer);
    glideUp.delete(c);
    any.close?.();
  }
  else await Promise.resolve(any.destroy?.()).catch(() => undefined);
}

/**
 * `it` for a test that relies on something only ioredis has (its retryStrategy or
 * offline-queue options, its Cluster internals, its resends): skipped in the other runs,
 * and the reason is in the title so that the skip is visible.
 */
export function ioredisOnly(reason: string): jest.It {
  if (CLIENT === 'ioredis') return it;
  const skip = ((title: string, ...rest: unknown[]) => (it.skip as (t: string, ...r: unknown[]) => void)(`${title} [ioredis only: ${reason}]`, ...rest)) as unknown as jest.It;
  return skip;
}
