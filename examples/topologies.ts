import { Cluster, Redis } from 'ioredis';
import { LockClient } from 'holdfast';

// #region example
// Quorum mode: independent masters (not replicas of each other); a lock needs a majority.
export function quorumLocks(urls: string[]) {
  const masters = urls.map((url) => new Redis(url));
  const locks = new LockClient(masters, { driftFactor: 0.01 });
  // holdfast never closes your connections: close them after the client.
  const close = async () => {
    await locks.close();
    await Promise.all(masters.map((m) => m.quit()));
  };
  return { locks, close };
}

// A Redis Cluster is one connection: each lock lives in one slot (its {name} hash tag).
export function clusterLocks(nodes: { host: string; port: number }[]): LockClient {
  return new LockClient(new Cluster(nodes));
}
// #endregion example
