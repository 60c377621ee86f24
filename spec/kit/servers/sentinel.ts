/**
 * A Sentinel-managed test topology: one primary, two replicas (`--replicaof`) and
 * three sentinels (`redis-server <config> --sentinel`, the config written here), all
 * on free ports of 127.0.0.1 and tracked like every other server of spec/kit/servers
 * (pid files, the 'exit' hook, jest's global teardown).
 *
 * Used by spec/integration/sentinel.spec.ts and scripts/demo.ts; as a CLI:
 * `npx tsx scripts/servers.ts sentinel`.
 */
import { clearTimeout, setTimeout } from 'node:timers';
import { rawCommand, startServer, stopAll, type RedisServer } from './index';

export const MASTER_NAME = 'holdfast';
/** Sentinels agreeing that the primary is down before a failover (of 3). */
const QUORUM = 2;

export interface SentinelTopology {
  /** The primary at start (after a failover it is the old one). */
  primary: RedisServer;
  replicas: RedisServer[];
  sentinels: RedisServer[];
  /** The name the sentinels monitor (`name` of ioredis's Sentinel options). */
  name: string;
  /** For `new Redis({ sentinels, name })`. */
  sentinelAddresses: { host: string; port: number }[];
  /** The port the sentinels name as primary now (asks one that answers). */
  currentPrimaryPort(): Promise<number>;
  /** Resolves once the sentinels name a primary other than `oldPort` and it answers as one with `replicas` connected replicas. */
  waitFailover(oldPort: number, opts?: { timeout?: number; replicas?: number }): Promise<number>;
  /** The server (of primary and replicas) on that port. */
  server(port: number): RedisServer;
  stop(): Promise<void>;
}

export interface SentinelOptions {
  /** Sentinel's down-after-milliseconds: how long the primary is unreachable before a failover. Default 1 000. */
  downAfter?: number;
  /** Sentinel's failover-timeout. Default 3 000. */
  failoverTimeout?: number;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** INFO replication field, or undefined. */
function field(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

async function waitUntil(what: string, timeout: number, check: () => Promise<boolean>): Promise<void> {
  let expired = false;
  const timer = setTimeout(() => (expired = true), timeout);
  let last = '';
  try {
    while (!expired) {
      try {
        if (await check()) return;
      } catch (e) {
        last = (e as Error).message;
      }
      await delay(50);
    }
  } finally {
    clearTimeout(timer);
  }
  throw new Error(`sentinel topology: ${what} within ${timeout} ms${last ? ` (last: ${last})` : ''}`);
}

export async function startSentinelTopology(opts: SentinelOptions = {}): Promise<SentinelTopology> {
  const downAfter = opts.downAfter ?? 1_000;
  const failoverTimeout = opts.failoverTimeout ?? 3_000;
  const started: RedisServer[] = [];
  try {
    // Any of them may become the primary. A full resync (a replica that cannot continue
    // from the new primary's history) starts at once: by default a diskless transfer
    // waits 5 s for more replicas, during which WAIT counts no acknowledgement.
    const data = ['--repl-diskless-sync-delay', '0'];
    const primary = await startServer({ args: data });
    started.push(primary);
    const replicas = await Promise.all([0, 1].map(() => startServer({ args: [...data, '--replicaof', '127.0.0.1', String(primary.port)] })));
    started.push(...replicas);
    // Both replicas in sync before the sentinels look: they discover replicas through the primary's INFO.
    await waitUntil('replicas in sync', 10_000, async () => {
      const infos = await Promise.all(replicas.map((r) => rawCommand(r.port, ['INFO', 'replication'], 1_000)));
      return infos.every((i) => field(i, 'master_link_status') === 'up');
    });
    const config = [
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primary.port} ${QUORUM}`,
      `sentinel down-after-milliseconds ${MASTER_NAME} ${downAfter}`,
      `sentinel failover-timeout ${MASTER_NAME} ${failoverTimeout}`,
      `sentinel parallel-syncs ${MASTER_NAME} 2`,
      '',
    ].join('\n');
    const sentinels = await Promise.all([0, 1, 2].map(() => startServer({ config, args: ['--sentinel'] })));
    started.push(...sentinels);
    const byPort = new Map([primary, ...replicas].map((s) => [s.port, s]));

    const currentPrimaryPort = async (): Promise<number> => {
      for (const s of sentinels) {
        if (!s.running || s.paused) continue;
        try {
          const info = await rawCommand(s.port, ['INFO', 'sentinel'], 1_000);
          const m = new RegExp(`name=${MASTER_NAME},status=\\w+,address=[\\d.]+:(\\d+)`).exec(info);
          if (m) return Number(m[1]);
        } catch {
          // try the next sentinel
        }
      }
      throw new Error('no sentinel answered');
    };
    const topology: SentinelTopology = {
      primary,
      replicas,
      sentinels,
      name: MASTER_NAME,
      sentinelAddresses: sentinels.map((s) => ({ host: s.host, port: s.port })),
      currentPrimaryPort,
      server: (port) => {
        const s = byPort.get(port);
        if (!s) throw new Error(`no server of the topology on port ${port}`);
        return s;
      },
      async waitFailover(oldPort, { timeout = 30_000, replicas: wanted = 0 } = {}) {
        let port = oldPort;
        await waitUntil(`a failover away from port ${oldPort}`, timeout, async () => {
          port = await currentPrimaryPort();
          if (port === oldPort) return false;
          const info = await rawCommand(port, ['INFO', 'replication'], 1_000);
          return field(info, 'role') === 'master' && Number(field(info, 'connected_slaves')) >= wanted;
        });
        return port;
      },
      stop: async () => {
        await Promise.all(started.map((s) => s.stop()));
      },
    };
    // Every sentinel knows the primary, both replicas and the other sentinels (hello messages, every 2 s).
    await waitUntil('sentinels ready', 20_000, async () => {
      const ok = await Promise.all(
        sentinels.map(async (s) => {
          const info = await rawCommand(s.port, ['INFO', 'sentinel'], 1_000);
          const m = /status=ok,address=[\d.]+:\d+,slaves=(\d+),sentinels=(\d+)/.exec(info);
          return m !== null && Number(m[1]) === 2 && Number(m[2]) === 3;
        }),
      );
      return ok.every(Boolean);
    });
    return topology;
  } catch (err) {
    await Promise.all(started.map((s) => s.stop()));
    throw err;
  }
}
