/** redlock v5: acquire([resource], lease) / lock.release(); polling retries under contention. */
import Redlock, { type Lock as RedlockLock } from 'redlock';
import { LEASE, MAX_WAIT_MS, PEER_RETRY_JITTER, PEER_RETRY_MS } from '../config';
import { connect, quitAll } from './connect';
import type { Runner } from './types';

export async function openRedlock(ports: number[]): Promise<Runner> {
  const conns = await Promise.all(ports.map(connect));
  const redlock = new Redlock(conns, {
    retryCount: Math.ceil(MAX_WAIT_MS / PEER_RETRY_MS),
    retryDelay: PEER_RETRY_MS,
    retryJitter: PEER_RETRY_JITTER,
  });
  // redlock emits 'error' (ResourceLockedError) on every contended attempt; without a
  // listener EventEmitter would throw.
  redlock.on('error', () => undefined);
  return {
    worker(name) {
      let held: RedlockLock | undefined;
      return {
        async acquire() {
          held = await redlock.acquire([`redlock:${name}`], LEASE);
        },
        async release() {
          const lock = held;
          held = undefined;
          if (lock) await lock.release();
        },
      };
    },
    close: () => quitAll(conns),
  };
}
