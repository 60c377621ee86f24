import { describe } from './options.js';
import { IoredisClient, type IoredisConnection } from './store/client/ioredis.js';
import { IoredisMockClient, isIoredisMock } from './store/client/ioredis-mock.js';
import { GlideClient, isGlide, isGlideCluster, type GlideConnection } from './store/client/glide.js';
import { isNodeRedisCluster, NodeRedisClient, type NodeRedisConnection } from './store/client/node-redis.js';
import type { RedisClientPort } from './store/client/redis-client.js';
import { PreloadedScripts } from './store/scripts/preload.js';

export type { GlideConnection, IoredisConnection, NodeRedisConnection };

/**
 * What holdfast accepts as one master (the user's; never closed by holdfast): an
 * ioredis 5/6 or iovalkey `Redis` (also Sentinel-managed) or `Cluster`, a node-redis
 * 5/6 client (`createClient()`), cluster (`createCluster()`) or Sentinel
 * (`createSentinel()`), connected, a Valkey GLIDE (2.3 or later) `GlideClient` or
 * `GlideClusterClient`, or, in unit tests, an ioredis-mock `Redis`.
 * Structural types, so that a project with only one of those libraries type-checks.
 */
export type Connection = IoredisConnection | NodeRedisConnection | GlideConnection;

const WANTED = 'an ioredis (or iovalkey) Redis or Cluster, a node-redis client or cluster, or a Valkey GLIDE client';

/**
 * Duck-typed so that ioredis 5 and 6, iovalkey (and a copy installed twice) are
 * accepted, and ioredis-mock, which tells its state by `connected` instead of `status`.
 */
function isIoredis(value: object): value is IoredisConnection {
  const c = value as Record<string, unknown>;
  const state = typeof c.status === 'string' || isIoredisMock(value);
  return typeof c.evalsha === 'function' && typeof c.eval === 'function' && typeof c.duplicate === 'function' && state;
}

/**
 * node-redis 5/6 clients, clusters and Sentinels (createSentinel); not its pools (no
 * pub/sub) nor a Sentinel's leased client (no duplicate).
 */
function isNodeRedis(value: object): value is NodeRedisConnection {
  const c = value as Record<string, unknown>;
  return (
    typeof c.sendCommand === 'function' &&
    typeof c.duplicate === 'function' &&
    typeof c.SSUBSCRIBE === 'function' &&
    typeof c.isOpen === 'boolean' &&
    typeof c.isReady === 'boolean' &&
    (typeof c.getMasterNode !== 'function' || typeof c.use === 'function')
  );
}

export function isConnection(value: unknown): value is Connection {
  return typeof value === 'object' && value !== null && (isIoredis(value) || isNodeRedis(value) || isGlide(value));
}

export function isCluster(connection: Connection): boolean {
  if (isIoredis(connection)) return (connection as { isCluster?: boolean }).isCluster === true;
  if (isGlide(connection)) return isGlideCluster(connection);
  return isNodeRedisCluster(connection);
}

/**
 * The store's view of a connection checked by checkConnections, its scripts preloaded
 * (a load bounded by `loadTimeout`, its failure told to `report`). Not on ioredis-mock,
 * whose EVALSHA never finds a script: each call runs by EVAL there.
 */
export function clientPort(connection: Connection, loadTimeout: number, report: (error: Error) => void): RedisClientPort {
  if (isIoredis(connection) && isIoredisMock(connection)) return new IoredisMockClient(connection);
  const port = isGlide(connection) ? new GlideClient(connection) : isIoredis(connection) ? new IoredisClient(connection) : new NodeRedisClient(connection);
  return new PreloadedScripts(port, loadTimeout, report);
}

/**
 * A node-redis client sends nothing before `connect()` (unlike ioredis, which connects
 * by itself): one not open would fail every call with node-redis's "The client is
 * closed". Open but not ready is fine: it is (re)connecting.
 */
function checkOpen(c: Connection, what: string): void {
  if (isNodeRedis(c) && !isIoredis(c) && !isGlide(c) && !(c as NodeRedisConnection).isOpen) {
    throw new TypeError(`${what} is a node-redis client that is not open: call \`await client.connect()\` before \`new LockClient(client)\``);
  }
}

export function checkConnections(value: unknown): Connection[] {
  if (Array.isArray(value)) {
    if (value.length === 0) throw new TypeError(`connection: an empty array; pass one client (${WANTED}) or an array of independent masters`);
    value.forEach((c, i) => {
      if (!isConnection(c)) throw new TypeError(`connection[${i}] must be an ioredis Redis, an iovalkey Redis, a node-redis client or a Valkey GLIDE client, got ${describe(c)}`);
      checkOpen(c, `connection[${i}]`);
      // Restart sit-out, hold restore and fencing floors are kept per master; a Cluster
      // loses one node's slots at a time, so a vote per Cluster would need them per slot owner.
      if (isCluster(c)) throw new TypeError(`connection[${i}] is a Cluster: quorum mode takes independent Redis masters (a quorum over Clusters is not supported)`);
    });
    if (new Set(value).size !== value.length) throw new TypeError('connection: the same client appears twice; quorum needs independent masters');
    return value;
  }
  if (!isConnection(value)) throw new TypeError(`connection must be ${WANTED} (or an array of independent masters), got ${describe(value)}`);
  checkOpen(value, 'connection');
  return [value];
}
