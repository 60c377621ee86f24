/**
 * Local Redis test topologies (single server, independent masters, Cluster),
 * started from the `redis-server` binary on 127.0.0.1 only.
 *
 * Used two ways:
 *   - imported by specs: `startServer()`, `startMasters(n)`, `startCluster()`;
 *   - as a CLI: `npx tsx scripts/servers.ts single | masters [N] | cluster [N] | sentinel`.
 *
 * Safety rules: port 6379 is never used (another Redis lives there), nothing
 * binds outside 127.0.0.1, and every started PID is recorded twice (in memory,
 * killed on process 'exit'; and as a file under os.tmpdir()/holdfast-test-pids,
 * for jest's globalTeardown when a worker dies without running 'exit').
 */
import { startServer, type RedisServer } from './server';
import { assertCount, startAll } from './start-all';
import { live } from './tracking';

export { startServer, type RedisServer, type ServerOptions } from './server';
export { startCluster, type TestCluster } from './cluster';
export { freePort } from './ports';
export { rawCommand } from './resp';
export { PID_DIR } from './tracking';

export async function startMasters(n: number, opts: { aof?: boolean } = {}): Promise<RedisServer[]> {
  assertCount('startMasters(n)', n, 1);
  return startAll(Array.from({ length: n }, () => startServer(opts)));
}

export async function stopAll(): Promise<void> {
  // In parallel: a cluster's stop() awaits its nodes' (memoized) stops before
  // removing its directory, so the order does not matter.
  await Promise.all([...live].map((s) => s.stop()));
}
