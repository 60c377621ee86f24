import type { Cluster, Redis } from 'ioredis';
import { describe } from './options.js';

/** What holdfast accepts as one master: an ioredis Redis or Cluster (the user's; never closed by holdfast). */
export type Connection = Redis | Cluster;

/** Duck-typed so that ioredis 5 and 6 (and a copy installed twice) are both accepted. */
export function isConnection(value: unknown): value is Connection {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return typeof c.evalsha === 'function' && typeof c.eval === 'function' && typeof c.duplicate === 'function' && typeof c.status === 'string';
}

export function isCluster(connection: Connection): connection is Cluster {
  return (connection as { isCluster?: boolean }).isCluster === true;
}

export function checkConnections(value: unknown): Connection[] {
  if (Array.isArray(value)) {
    if (value.length === 0) throw new TypeError('connection: an empty array; pass one ioredis client or an array of independent masters');
    value.forEach((c, i) => {
      if (!isConnection(c)) throw new TypeError(`connection[${i}] must be an ioredis Redis client, got ${describe(c)}`);
      if (isCluster(c)) throw new TypeError(`connection[${i}] is a Cluster: quorum mode takes independent Redis masters`);
    });
    if (new Set(value).size !== value.length) throw new TypeError('connection: the same client appears twice; quorum needs independent masters');
    return value;
  }
  if (!isConnection(value)) throw new TypeError(`connection must be an ioredis Redis or Cluster client (or an array of Redis masters), got ${describe(value)}`);
  return [value];
}
