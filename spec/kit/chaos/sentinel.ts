/**
 * Chaos, Sentinel mode (`npm run chaos -- --sentinel [--sync-replicas]`): a primary, two
 * replicas and three sentinels (spec/kit/servers/sentinel.ts); the workers hold a
 * Sentinel-managed ioredis connection. Its own fault, 'failover': SIGKILL the primary
 * the sentinels name now, wait until they promote a replica, start the old one again
 * (empty) and wait until it serves as a replica of the new primary, in sync, so that
 * the next failover has two replicas to choose from again.
 *
 * Without syncReplicas a grant the dead primary had not yet passed on is lost with it,
 * and a second owner gets in: those overlaps are violations, on purpose (a failover
 * excuses nothing). With it (`{ min: 1 }`), none is expected.
 */
import { rawCommand, type RedisServer } from '../servers';
import type { SentinelTopology } from '../servers/sentinel';
import type { Fault } from './history';

/** The syncReplicas the workers use with --sync-replicas: one replica, WAIT under the lease's call bound. */
export const CHAOS_SYNC_REPLICAS = { min: 1, timeout: 200 } as const;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Bounded poll of check, every 50 ms. */
async function until(what: string, timeout: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`chaos --sentinel: ${what} not within ${timeout} ms`);
}

/** The data servers (primary and replicas) in a fixed order: `master` of a failover fault indexes them. */
export function dataServers(t: SentinelTopology): RedisServer[] {
  return [t.primary, ...t.replicas];
}

/** One failover, from the kill of the current primary until the old one is a replica in sync again. */
export async function failover(t: SentinelTopology): Promise<Fault> {
  const servers = dataServers(t);
  const oldPort = await t.currentPrimaryPort();
  const old = t.server(oldPort);
  await old.kill('SIGKILL');
  const begin = Date.now();
  const newPort = await t.waitFailover(oldPort, { replicas: 1 });
  await old.restart();
  // Sentinel turns the returning old primary into a replica of the new one.
  await until('the old primary back as a replica in sync', 60_000, async () => {
    const info = await rawCommand(old.port, ['INFO', 'replication'], 1_000);
    return /role:slave/.test(info) && new RegExp(`master_port:${newPort}\\b`).test(info) && /master_link_status:up/.test(info);
  });
  return { kind: 'failover', master: servers.indexOf(old), begin, end: Date.now() };
}
