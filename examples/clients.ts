import { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { createClient, createCluster, createSentinel } from 'redis';
import { GlideClient } from '@valkey/valkey-glide';
import { LockClient } from 'holdfast';

// #region example
// ioredis 5 or 6: a Redis (also Sentinel-managed: new Redis({ sentinels, name })) or a Cluster.
export function ioredisLocks(url: string) {
  const redis = new Redis(url);
  const locks = new LockClient(redis);
  return { locks, close: async () => (await locks.close(), await redis.quit()) };
}

// iovalkey: ioredis's API, the same way.
export function iovalkeyLocks(url: string) {
  const valkey = new Valkey(url);
  const locks = new LockClient(valkey);
  return { locks, close: async () => (await locks.close(), await valkey.quit()) };
}

// node-redis 5 or 6: connect it first, and listen to its 'error' (node-redis throws one nobody hears).
export async function nodeRedisLocks(url: string) {
  const redis = await createClient({ url }).on('error', console.error).connect();
  const locks = new LockClient(redis);
  return { locks, close: async () => (await locks.close(), await redis.close()) };
}

// node-redis cluster, connected the same way.
export async function nodeRedisClusterLocks(urls: string[]) {
  const cluster = await createCluster({ rootNodes: urls.map((url) => ({ url })) }).on('error', console.error).connect();
  const locks = new LockClient(cluster);
  return { locks, close: async () => (await locks.close(), await cluster.close()) };
}

// node-redis Sentinel: the primary of `name`, followed across failovers; syncReplicas
// makes a lock survive one (WAIT for every replica, here two, after each grant and renewal).
export async function nodeRedisSentinelLocks(sentinels: { host: string; port: number }[], name: string) {
  const redis = await createSentinel({ name, sentinelRootNodes: sentinels }).on('error', console.error).connect();
  const locks = new LockClient(redis, { syncReplicas: { min: 2, timeout: 500 } });
  return { locks, close: async () => (await locks.close(), await redis.close()) };
}

// Valkey GLIDE 2.3 or later: a GlideClient, or a GlideClusterClient the same way.
export async function glideLocks(url: string) {
  const { hostname: host, port } = new URL(url);
  const glide = await GlideClient.createClient({ addresses: [{ host, port: Number(port) }], requestTimeout: 2_000 });
  const locks = new LockClient(glide);
  return { locks, close: async () => (await locks.close(), glide.close()) };
}
// #endregion example
