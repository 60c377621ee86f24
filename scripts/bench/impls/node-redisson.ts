/** node-redisson: its own two connections (commands + pub/sub); lock() (watchdog) / unlock(). */
import { Redisson } from 'node-redisson';
import { LEASE } from '../config';
import type { Runner } from './types';

export async function openRedisson(ports: number[]): Promise<Runner> {
  const redisson = new Redisson({
    redis: { options: { host: '127.0.0.1', port: ports[0] } },
    lockWatchdogTimeout: BigInt(LEASE),
  });
  await redisson.redis.ping();
  return {
    worker(name) {
      // Each handle gets its own random clientId: one owner per worker.
      const lock = redisson.getLock(`redisson:${name}`);
      return { acquire: () => lock.lock(), release: () => lock.unlock() };
    },
    close: () => redisson.quit(),
  };
}
