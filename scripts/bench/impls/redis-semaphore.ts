/** redis-semaphore Mutex (RedlockMutex on several masters): acquire()/release(), auto-refresh on. */
import { Mutex, RedlockMutex } from 'redis-semaphore';
import { LEASE, MAX_WAIT_MS, PEER_RETRY_MS } from '../config';
import { noteError } from '../log';
import { connect, quitAll } from './connect';
import type { Runner } from './types';

export async function openSemaphore(ports: number[]): Promise<Runner> {
  const conns = await Promise.all(ports.map(connect));
  const options = {
    lockTimeout: LEASE,
    acquireTimeout: MAX_WAIT_MS,
    retryInterval: PEER_RETRY_MS,
    onLockLost: (e: Error) => noteError('redis-semaphore lost', e),
  };
  return {
    worker(name) {
      const mutex = conns.length === 1 ? new Mutex(conns[0], `${name}`, options) : new RedlockMutex(conns, `${name}`, options);
      return { acquire: () => mutex.acquire(), release: () => mutex.release() };
    },
    close: () => quitAll(conns),
  };
}
