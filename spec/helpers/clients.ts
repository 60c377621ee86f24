/**
 * The client matrix: the behaviour specs make the lock's connections through these
 * helpers, of the kind HOLDFAST_CLIENT names ('ioredis', the default, or 'node-redis');
 * their admin connections (inspecting keys, flushing, killing clients) stay ioredis.
 * jest.config.js runs the matrix files once per kind.
 */
import Redis, { type RedisOptions } from 'ioredis';
import { createClient, createCluster } from 'redis';
import type { Connection } from '../../lib';

export type ClientKind = 'ioredis' | 'node-redis';

const kind = process.env.HOLDFAST_CLIENT ?? 'ioredis';
if (kind !== 'ioredis' && kind !== 'node-redis') throw new Error(`HOLDFAST_CLIENT must be ioredis or node-redis, got ${kind}`);
/** The client library the lock's connections use in this run. */
export const CLIENT: ClientKind = kind;

/** Options of the lock's connection that mean the same for every kind. */
export interface ConnectOptions {
  /** Milliseconds between reconnection attempts (default: the library's). */
  retryDelay?: number;
}

/** A connected client of the kind under test to the master on port; close it with closeConnection. */
export async function lockConnection(port: number, options: ConnectOptions = {}): Promise<Connection> {
  if (CLIENT === 'ioredis') {
    const ioOptions: RedisOptions = options.retryDelay === undefined ? {} : { retryStrategy: () => options.retryDelay };
    return new Redis(port, '127.0.0.1', ioOptions);
  }
  const delay = options.retryDelay;
  const c = createClient({ socket: { host: '127.0.0.1', port, ...(delay === undefined ? {} : { reconnectStrategy: () => delay }) } });
  // An unheard 'error' would throw in node-redis; the lock reports outages itself.
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

/** A connected Cluster client of the kind under test. */
export async function lockCluster(startupNodes: readonly { host: string; port: number }[]): Promise<Connection> {
  if (CLIENT === 'ioredis') return new Redis.Cluster([...startupNodes]);
  const c = createCluster({ rootNodes: startupNodes.map((n) => ({ socket: { host: n.host, port: n.port } })) });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

/** Closes a connection made here, at once (the user's job; holdfast never closes it). */
export async function closeConnection(c: Connection): Promise<void> {
  const any = c as unknown as { disconnect?: () => unknown; destroy?: () => unknown };
  if (CLIENT === 'ioredis') any.disconnect?.();
  else await Promise.resolve(any.destroy?.()).catch(() => undefined);
}

/**
 * `it` for a test that relies on something only ioredis has (its retryStrategy or
 * offline-queue options, its Cluster internals): skipped in the other runs, and the
 * reason is in the title so that the skip is visible.
 */
export function ioredisOnly(reason: string): jest.It {
  if (CLIENT === 'ioredis') return it;
  const skip = ((title: string, ...rest: unknown[]) => (it.skip as (t: string, ...r: unknown[]) => void)(`${title} [ioredis only: ${reason}]`, ...rest)) as unknown as jest.It;
  return skip;
}
