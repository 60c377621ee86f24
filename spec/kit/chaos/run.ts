/**
 * Chaos run: tries to break holdfast's promises under faults (scripts/chaos.ts is its
 * command line; docs/guides/developing.md and docs/safety.md say what it proves).
 *
 * Starts its own redis-servers (free ports, 127.0.0.1, never 6379: topology.ts), a
 * TcpProxy per worker and master in front of them, a fenced register in a redis-server
 * of its own (register.ts), and worker processes (worker.ts) that take locks over and
 * over, write to the register while they hold them, and log every critical section and
 * every wait to a JSONL file. Meanwhile it injects faults, one at a time, each by its
 * nemesis (nemeses/), each logged with its times: first every kind of the mode once, in
 * random order, then at random. At the end: the proxy and leak checks (audit.ts),
 * workers that exit by themselves after close, then the history is checked (verdict.ts).
 *
 * Every choice (the fault schedule, the targets, the workers' own) comes from one seed
 * (prng.ts): `seed` replays the same sequence of choices.
 *
 * Quorum mode: one proxy per worker and master. Cluster mode: each worker has one proxy
 * per node and an ioredis Cluster whose natMap sends every node address (CLUSTER SLOTS,
 * redirects, the sharded subscribers) to that worker's proxy, which CLIENT LIST on the
 * nodes confirms twice per run. Sentinel mode: no proxies; the workers follow the
 * sentinels. All times are Date.now() of one machine, shared by every process of the run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TcpProxy } from '../proxy';
import { AOF_FAULT_KINDS, CLOCK_FAULT_KINDS, CLUSTER_FAULT_KINDS, CLUSTER_REPLICA_FAULT_KINDS, FAULT_KINDS, SENTINEL_FAULT_KINDS, type Fault } from './faults';
import { NEMESES, type ChaosRun } from './nemeses';
import { CHAOS_SYNC_REPLICAS, LOCKS, SEMAPHORE, type ChaosOptions, type ChaosResult } from './options';
import { freshSeed, seededRng } from './prng';
import type { Violation } from './records';
import { checkLeftovers, checkProxied } from './audit';
import { sleep, withDeadline } from './timing';
import { ChaosServers } from './topology';
import { judge, summarize } from './verdict';
import { WorkerSlot } from './workers';

/** How long the workers may take to start and answer, ms. */
const WORKER_START_MS = 60_000;

export type { ChaosOptions, ChaosResult } from './options';

export async function runChaos(opts: ChaosOptions = {}): Promise<ChaosResult> {
  const durationMs = opts.durationMs ?? 75_000;
  const lease = opts.watchdogTimeout ?? 800;
  const [gapLo, gapHi] = opts.faultGap ?? [800, 2_000];
  const mode = opts.mode ?? 'single';
  const seed = opts.seed ?? freshSeed();
  const rng = seededRng(seed);
  const say = (text: string) => {
    if (opts.verbose) process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 23)}] ${text}\n`);
  };
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-chaos-'));
  const faults: Fault[] = [];
  const violations: Violation[] = [];
  const workers: WorkerSlot[] = [];
  /** Client connections seen by CLIENT LIST, and those of them that were ioredis's sharded subscribers. */
  const proxied = { clients: 0, shardSubscribers: 0 };
  let leftovers = 0;
  const servers = await ChaosServers.start(mode, { aof: opts.aof, clock: opts.clock, replicas: opts.replicas });
  try {
    say(`redis-server ${servers.servers.map((s) => `pid ${s.pid} port ${s.port}`).join(', ')} (${mode}${opts.aof ? ', AOF' : ''}${opts.clock ? ', steppable clocks' : ''}), register on port ${servers.register.port}; seed ${seed}; logs in ${logDir}`);
    for (let i = 0; i < (opts.workers ?? 3); i++) {
      const proxies = mode === 'sentinel' ? [] : await Promise.all(servers.servers.map((s) => TcpProxy.start({ host: '127.0.0.1', port: s.port })));
      workers.push(
        new WorkerSlot(i, proxies, (slot) => ({
          worker: slot.index,
          gen: slot.gen,
          seed: (seed + slot.index * 7_919 + slot.gen * 104_729) >>> 0,
          ports: slot.proxies.map((p) => p.port),
          clusterNodes: mode === 'cluster' ? servers.servers.map((s) => s.port) : undefined,
          sentinel: servers.sentinel ? { addresses: servers.sentinel.sentinelAddresses, name: servers.sentinel.name } : undefined,
          syncReplicas: mode === 'sentinel' && opts.syncReplicas ? CHAOS_SYNC_REPLICAS : undefined,
          registerPort: servers.register.port,
          log: path.join(logDir, `worker-${slot.index}.${slot.gen}.jsonl`),
          tasks: opts.tasks ?? 3,
          locks: LOCKS,
          watchdogTimeout: lease,
          // As lib/client.ts sizes a quorum's sit-out.
          quorumSitOut: mode === 'quorum' ? lease + Math.max(100, lease / 4) : undefined,
          semaphore: opts.semaphore ? SEMAPHORE : undefined,
          readWrite: opts.readWrite,
          fair: opts.fair,
          multi: opts.multi,
        }), violations),
      );
    }
    for (const w of workers) w.spawn();
    // Each worker compiles its TypeScript (tsx) as it starts: on a fresh clone, next to
    // other suites on two cores, that alone has taken tens of seconds.
    await withDeadline(Promise.all(workers.map((s) => s.ready)), WORKER_START_MS, 'workers did not start').catch((e: Error) => {
      const waiting = workers.filter((w) => w.clientId === undefined).map((w) => `worker ${w.index}: ${w.output.slice(-300) || 'no output'}`);
      throw new Error(`${e.message} (${waiting.join('; ')})`);
    });
    servers.connectAdmins();
    say(`${workers.length} workers x ${opts.tasks ?? 3} tasks running for ${Math.round(durationMs / 1000)} s`);

    const run: ChaosRun = {
      lease,
      rng,
      servers,
      workers,
      semaphore: opts.semaphore === true,
      target: async () => {
        if (rng.next() < 0.8) {
          const owners = (await Promise.all(servers.admins.map((a) => withDeadline(a.hkeys(`holdfast:{${LOCKS[0]}}`), 500, 'hkeys').catch(() => [] as string[])))).flat();
          const holder = workers.find((s) => owners.some((o) => s.clientId !== undefined && o.startsWith(`${s.clientId}:`)));
          if (holder) return holder;
        }
        return rng.pick(workers);
      },
    };

    // Faults, one at a time: first each kind once (in random order), then at random.
    const until = Date.now() + durationMs;
    const defaults = mode === 'sentinel' ? SENTINEL_FAULT_KINDS : mode === 'cluster' ? (opts.replicas ? CLUSTER_REPLICA_FAULT_KINDS : CLUSTER_FAULT_KINDS) : opts.aof ? AOF_FAULT_KINDS : FAULT_KINDS;
    const kinds = opts.faults ?? (opts.clock ? [...defaults, ...CLOCK_FAULT_KINDS.filter((k) => !FAULT_KINDS.includes(k))] : defaults);
    const plan = rng.shuffle(kinds);
    await sleep(Math.min(1_000, durationMs / 10));
    if (mode === 'cluster') {
      const owners = await servers.lockOwners(run.semaphore);
      say(`locks by node: ${[...owners].sort().map(([node, locks]) => `node ${node}: ${locks.join(', ')}`).join('; ')}`);
    }
    await checkProxied(servers, workers, 'before the first fault', proxied, violations);
    while (plan.length > 0 || Date.now() < until - lease * 3) {
      const kind = plan.shift() ?? rng.pick(kinds);
      const f = await NEMESES[kind].inject(run);
      faults.push(f);
      const where = f.worker !== undefined ? ` worker ${f.worker}` : f.locks !== undefined ? ` node ${f.master} (${f.locks.join(', ') || 'no lock'})${f.how ? `, ${f.how}` : ''}` : '';
      say(`${f.kind}${where} ${f.end - f.begin} ms`);
      await sleep(rng.int(gapLo, gapHi));
    }
    const rest = until - Date.now();
    if (rest > 0) await sleep(rest);
    // After every fault, with the reconnections and redirects they caused.
    await checkProxied(servers, workers, 'after the last fault', proxied, violations);

    // Stop: workers finish their holds, close their LockClient and report 'closed'.
    say('stopping workers');
    await Promise.all(workers.map((s) => s.ready));
    for (const s of workers) s.child!.send('stop');
    const closedAll = await withDeadline(Promise.all(workers.map((s) => s.closed)), 20_000, 'close').then(
      () => true,
      () => false,
    );
    if (!closedAll) violations.push({ kind: 'exit', message: 'a worker did not finish its holds and close within 20 s of stop' });
    const left = await checkLeftovers(servers, lease, violations);
    leftovers = left.leftovers;
    say(`leak check done: ${left.leftovers} lock keys and channels left, ${left.fences} fence counters`);

    // Exit: each worker drops its connection and IPC channel and must then exit by itself.
    for (const s of workers) {
      s.expectedExit = true;
      s.child!.send('exit');
    }
    await Promise.all(
      workers.map(async (s) => {
        const code = await withDeadline(s.exited!, 5_000, 'exit').catch(() => 'timeout' as const);
        if (code !== 0) {
          violations.push({ kind: 'exit', message: `worker ${s.index} gen ${s.gen} ${code === 'timeout' ? 'did not exit by itself within 5 s of close' : `exited with code ${code}`}\n${s.output}` });
        }
      }),
    );
  } finally {
    for (const s of workers) await s.reap();
    await Promise.all(workers.flatMap((s) => s.proxies.map((p) => p.close())));
    servers.copyLogs(logDir);
    await servers.stop();
  }

  const verdict = judge(logDir, faults, opts, lease, servers.servers.length, violations);
  const clean = verdict.report.violations.length === 0;
  const clustered = mode === 'cluster';
  const summary = summarize(verdict, faults, {
    seed,
    title: `holdfast chaos${opts.readWrite ? ' (read-write locks)' : ''}${opts.fair ? ' (fair locks)' : ''}${opts.multi ? ' (with multi-locks)' : ''}${opts.semaphore ? ' (with a semaphore)' : ''} (${mode} mode${opts.replicas ? ' with a replica per master' : ''}${opts.aof ? ' with AOF' : ''}${opts.clock ? ' with clock steps' : ''}${mode === 'sentinel' ? `, syncReplicas ${opts.syncReplicas ? JSON.stringify(CHAOS_SYNC_REPLICAS) : 'off'}` : ''}, ${servers.servers.length} data server(s)): ${workers.length} workers x ${opts.tasks ?? 3} tasks, locks ${LOCKS.join(', ')}, watchdogTimeout ${lease} ms, ${Math.round(durationMs / 1000)} s`,
    proxied: `client connections seen on the servers in two CLIENT LIST rounds: ${proxied.clients}${clustered ? `, ${proxied.shardSubscribers} of them sharded subscribers` : ''}; not through a worker's proxy: ${violations.filter((v) => v.kind === 'proxy').length}`,
    logs: !clean || opts.keepLogs ? logDir : '(removed)',
  });
  if (clean && !opts.keepLogs) fs.rmSync(logDir, { recursive: true, force: true });
  else fs.writeFileSync(path.join(logDir, 'faults.json'), JSON.stringify(faults, null, 1));
  return { seed, ...verdict, faults, violations: verdict.report.violations, leftovers, summary, logDir, clientsChecked: proxied };
}
