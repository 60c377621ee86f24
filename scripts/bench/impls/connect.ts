/** Connections every implementation opens for itself (127.0.0.1, errors tallied, never thrown). */
import Redis from 'ioredis';
import { createClient } from 'redis';
import { noteError } from '../log';

export async function connect(port: number): Promise<Redis> {
  const redis = new Redis({ host: '127.0.0.1', port });
  redis.on('error', (e: unknown) => noteError(`ioredis :${port}`, e));
  await redis.ping();
  return redis;
}

/** A connected node-redis (v6) client: holdfast's node-redis rows. */
export async function connectNodeRedis(port: number): Promise<ReturnType<typeof createClient>> {
  const client: ReturnType<typeof createClient> = createClient({ socket: { host: '127.0.0.1', port } });
  client.on('error', (e: unknown) => noteError(`node-redis :${port}`, e));
  await client.connect();
  return client;
}

export async function quitAll(conns: Redis[]): Promise<void> {
  await Promise.all(conns.map((c) => c.quit().catch(() => c.disconnect())));
}
