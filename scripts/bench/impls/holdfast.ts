/** holdfast as documented: lock() (watchdog lease) and unlock(), one handle per worker, outside scopes. */
import { LEASE } from '../config';
import { noteError } from '../log';
import { connect, quitAll } from './connect';
import type { HoldfastModule } from './holdfast-module';
import type { Runner } from './types';

export interface HoldfastOptions {
  fair: boolean;
  /**
   * Prepended to every lock name: two holdfast versions in one run keep to their own
   * keys, so neither meets what the other left behind (fence counters, queues).
   */
  keyPrefix: string;
  /** Names this version in error tallies. */
  tag: string;
}

export async function openHoldfast(holdfast: HoldfastModule, ports: number[], opts: HoldfastOptions): Promise<Runner> {
  const conns = await Promise.all(ports.map(connect));
  const client = new holdfast.LockClient(conns.length === 1 ? conns[0] : conns, { watchdogTimeout: LEASE });
  client.on('error', (e) => noteError(`${opts.tag} error event`, e));
  client.on('lost', (e) => noteError(`${opts.tag} lost event`, new Error(`${e.name}: ${e.reason}`)));
  return {
    worker(name) {
      const key = opts.keyPrefix + name;
      const lock = opts.fair ? client.getFairLock(key) : client.getLock(key);
      return { acquire: () => lock.lock(), release: () => lock.unlock() };
    },
    async close() {
      await client.close();
      await quitAll(conns);
    },
  };
}
