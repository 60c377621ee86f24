/** Connections every implementation opens for itself (127.0.0.1, errors tallied, never thrown). */
import Redis from 'ioredis';
import { noteError } from '../log';

export async function connect(port: number): Promise<Redis> {
  const redis = new Redis({ host: '127.0.0.1', port });
  redis.on('error', (e: unknown) => noteError(`ioredis :${port}`, e));
  await redis.ping();
  return redis;
}

export async function quitAll(conns: Redis[]): Promise<void> {
  await Promise.all(conns.map((c) => c.quit().catch(() => c.disconnect())));
}
