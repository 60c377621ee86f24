import { execFile } from 'node:child_process';
import path from 'node:path';
import { rawCommand, startCluster, type TestCluster } from '../kit/servers';
import { ioredisOnly } from '../helpers/clients';

// A Redis Cluster with one replica per master (spec/kit/servers: startCluster({ replicas })),
// as the chaos run's --cluster --replicas mode uses it.

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicas: 1 });
}, 60_000);
afterAll(() => cluster.stop());

it('starts three masters, each with a replica in sync', async () => {
  expect(cluster.nodes).toHaveLength(6);
  const infos = await Promise.all(cluster.nodes.map((n) => rawCommand(n.port, ['INFO', 'replication'])));
  const masters = infos.filter((i) => /role:master/.test(i));
  expect(masters).toHaveLength(3);
  for (const info of masters) expect(info).toMatch(/connected_slaves:1/);
  for (const info of infos.filter((i) => /role:slave/.test(i))) expect(info).toMatch(/master_link_status:up/);
});

// ioredis's Cluster drops the replicas from its pool ('-node') before its first 'ready':
// the scripts' preload gate, opened by that break, must not hold calls behind it forever.
ioredisOnly('its Cluster says -node for each replica before ready')(
  'a LockClient on a new Cluster client takes its first lock when the Cluster has replicas',
  async () => {
    const fixture = path.join(__dirname, '..', 'fixtures', 'cluster-first-lock.ts');
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['-r', 'tsx/cjs', fixture, JSON.stringify(cluster.startupNodes)], { cwd: path.join(__dirname, '..', '..'), timeout: 20_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.killed ? 'no lock within 20 s (the process was killed)' : error.message}\n${stderr}`)) : resolve(stdout),
      );
    });
    expect(out.trim()).toBe('held');
  },
  30_000,
);
