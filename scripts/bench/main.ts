/**
 * holdfast benchmark: holdfast side by side with the raw floor (holdfast's own Lua
 * scripts called directly) and its peers (redlock v5, redis-semaphore, node-redisson),
 * in one run, on redis-server processes it starts itself (127.0.0.1, free ports).
 *
 *   npm run bench                      # default: ~5 min on 2 cores
 *   npm run bench -- --quick           # smoke run, < 1 min
 *   npm run bench -- --only workers16  # one scenario (comma list; names or numbers 1..9)
 *   npm run bench -- --only semaphore  # holdfast's Semaphore against redis-semaphore's (opt-in)
 *   npm run bench -- --only multi2     # getMultiLock over 2 names against redlock's acquire([a, b]) (opt-in)
 *   npm run bench -- --baseline main   # also holdfast at git ref `main`, next to the working tree
 *   options: --rounds N; --impl holdfast[,redlock...] (only these, and the floor);
 *            --svg (write docs/bench.svg also for --quick / --only / --impl / --baseline runs)
 *   profile: npx tsx --cpu-prof --cpu-prof-dir=bench-results/profiles scripts/bench/main.ts --only 1 --impl holdfast
 *            (child processes inherit the flag and write their own profiles)
 *
 * holdfast runs from source (lib/, via tsx). Children (scenarios 3, 4, 5, 7) are forks of
 * child.ts with the same loader; each round of 3 and 4 gets fresh processes.
 *
 * Scenarios (implementations alternate within each round: A B C D E, A B C D E, ...):
 *   1 uncontended  sequential lock+unlock on one key
 *   2 parallel64   64 concurrent loops, each on its own key
 *   3 workers16    16 workers on one key in one process (one client), ~0 ms critical section
 *   4 clients16    16 workers on one key in one process, each with its own client
 *   5 procs4       4 processes on one key, 0 ms and 2 ms think time
 *   6 quorum       uncontended cycle on 3 independent masters
 *   7 watchdog     10 000 held locks under the watchdog; heap per lock, heap growth
 *   8 readmostly   16 loops on one name holding 1 ms: read-write lock vs the plain lock (not in the chart)
 *   9 semaphore    holdfast's Semaphore against redis-semaphore's (opt-in)
 *  10 multi2       two names together: getMultiLock vs redlock acquire([a, b]) (opt-in)
 *
 * --baseline <git-ref> checks that ref out into a temporary git worktree (baseline.ts)
 * and adds holdfast@<ref> (and its fair lock) right after each holdfast implementation,
 * against the same floor in the same rounds; the watchdog scenario runs once per version.
 *
 * Output: markdown tables on stdout, JSON in bench-results/latest.json, an SVG chart
 * in docs/bench.svg (full default runs). Progress goes to stderr.
 *
 * Costs: "RT" = commands sent by the Node process(es) (counted by wrapping ioredis'
 * Redis.prototype.sendCommand: round trips, pipelining aside); "Redis cmds" = server
 * total_commands_processed delta, which includes the commands run inside Lua scripts;
 * "Redis CPU" = used_cpu_user+sys delta of the server(s); "Node CPU" = process.cpuUsage.
 */
import os from 'node:os';
import type Redis from 'ioredis';
import { startMasters, startServer, stopAll } from '../../spec/kit/servers';
import { parseArgs, USAGE, type Args } from './args';
import { createBaselineWorktree } from './baseline';
import { LEASE, PEER_RETRY_JITTER, PEER_RETRY_MS, POLL_MS } from './config';
import { installCommandCounter } from './counters';
import { setRetryBudget, waitForQuiet } from './disturbance';
import type { Env } from './env';
import { connect } from './impls/connect';
import { buildHoldfast, loadHoldfast } from './impls/holdfast-module';
import { buildRegistry, selectImpls } from './impls/registry';
import type { BaselineCheckout } from './impls/types';
import { childCounts, countUnhandledRejections, dedupeWarnings, errorSamples, errorStack, errorText, log, secondsSinceStart, unhandledRejections, warningKinds } from './log';
import { markdownReport } from './report/markdown';
import { writeJson, writeSvg } from './report/output';
import { evaluateTargets } from './report/targets';
import type { ScenarioResult } from './results';
import { parallel64 } from './scenarios/parallel64';
import { procs4 } from './scenarios/procs4';
import { quorum } from './scenarios/quorum';
import { readMostly } from './scenarios/read-mostly';
import { uncontended } from './scenarios/uncontended';
import { watchdog, type WatchdogRun } from './scenarios/watchdog';
import { semaphore } from './scenarios/semaphore';
import { multi2 } from './scenarios/multi2';
import { workers16 } from './scenarios/workers16';

function usage(): Args {
  try {
    const args = parseArgs(process.argv.slice(2));
    if (!args.help) return args;
    process.stderr.write(`${USAGE}\n`);
    process.exit(0);
  } catch (e) {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)} (--help for usage)\n`);
    process.exit(2);
  }
}

function onSignals(): void {
  let interrupted = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (interrupted) process.exit(130);
      interrupted = true;
      log(`${sig}: stopping servers`);
      // process.exit runs the 'exit' handlers: the baseline worktree goes too.
      void stopAll().finally(() => process.exit(130));
    });
  }
}

/** The working tree's build, before any server starts (see holdfast-module.ts). */
function buildOrExit(): void {
  try {
    buildHoldfast();
  } catch (e) {
    process.stderr.write(`bench: building holdfast failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
}

/** The baseline worktree, with its holdfast loaded once here so a broken ref fails before any server starts. */
function baselineOrExit(ref: string | undefined): BaselineCheckout | undefined {
  if (ref === undefined) return undefined;
  try {
    const checkout = createBaselineWorktree(ref);
    buildHoldfast(checkout.dir);
    loadHoldfast(checkout.dir);
    return checkout;
  } catch (e) {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const { cfg, only, svg, implFilter, baseline: baselineRef } = usage();
  installCommandCounter();
  countUnhandledRejections();
  dedupeWarnings();
  onSignals();
  buildOrExit();
  const baseline = baselineOrExit(baselineRef);
  const registry = buildRegistry(baseline);
  log(`mode ${cfg.mode}, ${cfg.rounds} round(s), scenarios: ${[...only].join(', ')}`);
  setRetryBudget(cfg.retryBudgetMs);
  if (baseline && cfg.rounds % 2 === 1) {
    log(`baseline: ${cfg.rounds} round(s) is odd: the working tree runs first more often than holdfast@${baseline.ref}, so their comparison keeps part of the position effect (use an even --rounds)`);
  }

  const results = new Map<string, ScenarioResult>();
  let watchdogRuns: WatchdogRun[] = [];
  let redisVersion = '?';
  const admins: Redis[] = [];
  let failure: unknown;
  try {
    const single = await startServer();
    const masters = only.has('quorum') ? await startMasters(3) : [];
    log(`redis-server on ${[single, ...masters].map((s) => s.port).join(', ')}`);
    const admin = await connect(single.port);
    admins.push(admin);
    const masterAdmins = await Promise.all(masters.map((m) => connect(m.port)));
    admins.push(...masterAdmins);
    redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? '?';
    // npm and tsx are still busy for a moment after starting us.
    await waitForQuiet(cfg.mode === 'quick' ? 1_000 : 5_000);
    const env: Env = {
      cfg,
      impls: selectImpls(registry.single, implFilter),
      quorumImpls: selectImpls(registry.quorum, implFilter),
      single,
      masters,
      admin,
      masterAdmins,
      baseline,
    };

    if (only.has('uncontended')) results.set('uncontended', await uncontended(env));
    if (only.has('parallel64')) results.set('parallel64', await parallel64(env));
    if (only.has('workers16')) results.set('workers16', await workers16(env));
    if (only.has('clients16')) results.set('clients16', await workers16(env, true));
    if (only.has('procs4')) {
      for (const think of [0, 2]) {
        const r = await procs4(env, think);
        results.set(r.id, r);
      }
    }
    if (only.has('quorum')) results.set('quorum', await quorum(env));
    if (only.has('watchdog')) watchdogRuns = await watchdog(env);
    if (only.has('semaphore')) results.set('semaphore', await semaphore(env));
    if (only.has('multi2')) results.set('multi2', await multi2(env));
    if (only.has('readmostly')) results.set('readmostly', await readMostly(env));
  } catch (e) {
    failure = e;
    log(`FAILED: ${errorStack(e)}`);
  } finally {
    await Promise.all(admins.map((a) => a.quit().catch(() => a.disconnect())));
    await stopAll().catch((e) => log(`stopAll: ${errorText(e)}`));
    log('servers stopped');
  }

  // ---- report
  const cpus = os.cpus();
  const meta = {
    date: new Date().toISOString(),
    mode: cfg.mode,
    rounds: cfg.rounds,
    host: { platform: `${os.type()} ${os.release()} ${os.arch()}`, cpus: cpus.length, cpuModel: cpus[0]?.model ?? '?', memGB: Math.round(os.totalmem() / 2 ** 30) },
    node: process.version,
    redis: redisVersion,
    leaseMs: LEASE,
    baseline: baseline && { ref: baseline.ref, commit: baseline.commit },
    unhandledRejections: unhandledRejections() + childCounts.unhandled,
    warnings: { ...Object.fromEntries(warningKinds), childProcesses: childCounts.warnings },
    errors: Object.fromEntries(errorSamples),
    summary: '',
    footnote: '',
  };
  meta.summary =
    `${meta.date.slice(0, 10)} · ${meta.host.cpus} × ${meta.host.cpuModel} · Node ${meta.node} · redis-server ${redisVersion} · ${cfg.mode} mode, ${cfg.rounds} round(s), implementations alternating per round` +
    (baseline ? ` · baseline holdfast@${baseline.ref} (${baseline.commit.slice(0, 9)})` : '');
  meta.footnote = `Contended floor: holdfast's Lua scripts retried every ${POLL_MS} ms. Peers: redlock retryDelay ${PEER_RETRY_MS}±${PEER_RETRY_JITTER} ms, redis-semaphore retryInterval ${PEER_RETRY_MS} ms; lease ${LEASE} ms everywhere.`;

  const wdNow = watchdogRuns.find((w) => w.impl === 'holdfast')?.result;
  const wdBase = watchdogRuns.find((w) => w.impl !== 'holdfast')?.result;
  const targets = evaluateTargets(results, wdNow);
  const failed = failure ? errorText(failure) : undefined;
  process.stdout.write(
    markdownReport({
      cfg,
      meta,
      results: [...results.values()],
      impls: [...registry.single, ...registry.quorum],
      watchdog: watchdogRuns,
      targets,
      errorKinds: errorSamples.size,
      failure: failed,
    }),
  );
  writeJson({ meta, config: cfg, scenarios: [...results.values()], watchdog: wdNow, baselineWatchdog: wdBase, targets, failed });
  if (svg && results.size > 0 && !failure) {
    // The chart is × the raw floor; readmostly's ratios are × the plain lock.
    writeSvg([...results.values()].filter((s) => s.id !== 'readmostly'), { summary: meta.summary, footnote: meta.footnote, baselineRef: baseline?.ref });
  } else {
    log(`docs/bench.svg not written (${failure ? 'the run failed' : 'only full default runs write it; --svg forces'})`);
  }
  log(`done in ${secondsSinceStart().toFixed(0)} s`);
  // Peers leave timers behind (node-redisson's wait timeouts): exit explicitly.
  process.exitCode = failure ? 1 : 0;
  process.stdout.write('', () => process.exit());
}

main().catch((e: unknown) => {
  log(`fatal: ${errorStack(e)}`);
  void stopAll().finally(() => process.exit(1));
});
