/** holdfast as documented: lock() (watchdog lease) and unlock(), one handle per worker, outside scopes. */
import { LEASE } from '../config';
import { noteError } from '../log';
import { connect, connectNodeRedis, quitAll } from './connect';
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
  /** The client library of its connections (default ioredis): the node-redis rows measure the other adapter. */
  client?: 'ioredis' | 'node-redis';
}

export async function openHoldfast(holdfast: HoldfastModule, ports: number[], opts: HoldfastOptions): Promise<Runner> {
  const nodeRedis = opts.client === 'node-redis' ? await Promise.all(ports.map(connectNodeRedis)) : [];
  const conns = opts.client === 'node-redis' ? [] : await Promise.all(ports.map(connect));
  const given = opts.client === 'node-redis' ? nodeRedis : conns;
  const client = new holdfast.LockClient(given.length === 1 ? given[0] : given, { watchdogTimeout: LEASE });
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
      await Promise.all(nodeRedis.map((c) => c.close().catch(() => c.destroy())));
    },
  };
}
