/**
 * Local Redis test topologies on the command line (spec/kit/servers starts them):
 *
 *   npx tsx scripts/servers.ts single | masters [N=3] | cluster [N=3] | sentinel
 *
 * Runs until Ctrl-C (SIGINT), SIGTERM or SIGHUP, which stop every server it started.
 */
import { startCluster, startMasters, startServer, stopAll } from '../spec/kit/servers';
import { startSentinelTopology } from '../spec/kit/servers/sentinel';

function usage(): never {
  console.error('usage: tsx scripts/servers.ts single | masters [N=3] | cluster [N=3] | sentinel');
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  const [kind, count] = argv;
  const n = count === undefined ? 3 : Number(count);
  if (count !== undefined && !/^\d+$/.test(count)) usage();

  let shuttingDown = false;
  const shutdown = (sig: NodeJS.Signals): void => {
    if (shuttingDown) {
      // Second signal: give up waiting; the 'exit' hook SIGKILLs the rest.
      console.error(`${sig} again: killing servers`);
      process.exit(1);
    }
    shuttingDown = true;
    console.log(`\n${sig}: stopping...`);
    stopAll().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  // SIGHUP too: redis-server ignores it, so a closed terminal would leave servers running.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, shutdown);

  const example = (expr: string): void => {
    console.log(`\nimport Redis from 'ioredis';\nimport { LockClient } from 'holdfast';\nconst locks = new LockClient(${expr});`);
  };
  switch (kind) {
    case 'single': {
      const s = await startServer();
      console.log(`redis-server pid ${s.pid}: ${s.url}`);
      example(`new Redis('${s.url}')`);
      break;
    }
    case 'masters': {
      const servers = await startMasters(n);
      for (const s of servers) console.log(`master pid ${s.pid}: ${s.url}`);
      example(`[${servers.map((s) => `new Redis('${s.url}')`).join(', ')}]`);
      break;
    }
    case 'cluster': {
      const c = await startCluster({ masters: n });
      for (const s of c.nodes) console.log(`cluster node pid ${s.pid}: ${s.url}`);
      example(`new Redis.Cluster(${JSON.stringify(c.startupNodes)})`);
      break;
    }
    case 'sentinel': {
      const t = await startSentinelTopology();
      console.log(`primary ${t.primary.url}, replicas ${t.replicas.map((r) => r.port).join(', ')}, sentinels ${t.sentinels.map((s) => s.port).join(', ')}`);
      example(`new Redis({ sentinels: ${JSON.stringify(t.sentinelAddresses)}, name: '${t.name}' })`);
      break;
    }
    default:
      usage();
  }
  console.log('\nRunning; Ctrl-C (SIGINT) or SIGTERM stops everything.');
}

if (require.main === module) {
  main(process.argv.slice(2)).catch(async (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    await stopAll().catch(() => undefined);
    process.exit(1);
  });
}
