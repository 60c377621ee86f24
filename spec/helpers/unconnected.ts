import Redis from 'ioredis';
import { LockClient } from '../../lib';

/**
 * A LockClient over a lazy ioredis client that must never connect: port 1 is never a
 * Redis, so if a rejected call sent anything, ioredis would leave the 'wait' status.
 * Registers its own beforeEach/afterEach; read `current()` inside a spec.
 */
export function unconnectedClient(): () => { redis: Redis; locks: LockClient } {
  let state: { redis: Redis; locks: LockClient } | undefined;
  beforeEach(() => {
    const redis = new Redis({ port: 1, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => undefined);
    state = { redis, locks: new LockClient(redis) };
  });
  afterEach(async () => {
    const { redis, locks } = state!;
    await locks.close();
    expect(redis.status).toBe('wait'); // nothing was sent
    redis.disconnect();
  });
  return () => state!;
}
