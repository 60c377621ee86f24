/**
 * The chaos run's command line (spec/kit/chaos/run.ts does the run; docs/safety.md says
 * what it proves):
 *
 *   npm run chaos                 # ~75 s, one master
 *   npm run chaos -- --minutes 5  # longer (--seconds N to try things)
 *   npm run chaos -- --seed N     # replays a run's choices (the fault schedule, the workers')
 *   npm run chaos -- --aof        # Redis with appendonly (fsync always): restarts keep the data
 *   npm run chaos -- --clock      # the server's clock is stepped forward and back (unsafe: overlaps show)
 *   npm run chaos -- --quorum     # 3 independent masters (quorum mode)
 *   npm run chaos -- --cluster    # a 3-master Redis Cluster
 *   npm run chaos -- --cluster --replicas   # one replica per master; failovers (kill, CLUSTER FAILOVER)
 *   npm run chaos -- --semaphore  # workers also take 1-3 permits of semaphore 'sem' (limit 5)
 *   npm run chaos -- --rw         # read-write locks: never a reader and a writer at once, writers get in
 *   npm run chaos -- --fair       # fair locks (one Redis or --cluster)
 *   npm run chaos -- --multi      # workers also take multi-locks over 2 of the names
 *   npm run chaos -- --sentinel [--sync-replicas]   # primary, 2 replicas, 3 sentinels; failovers
 *   npm run chaos -- --report [--minutes N] [--seed N]   # every mode in turn; the table into docs/safety.md
 *   other options: --workers N --tasks N --faults kill,pause,... --keep-logs
 *   HOLDFAST_CHAOS_TRACE=1 npm run chaos -- --keep-logs   # workers also log each hold's
 *     acquired/released/lost events by owner, which owner each section is, and why a
 *     nested run() failed: enough to follow a violation back to the call that caused it
 *
 * Exit code 0 only with zero violations (--report: in every mode docs/safety.md calls safe).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runChaos, type ChaosOptions } from '../spec/kit/chaos/run';
import { AOF_FAULT_KINDS, CLOCK_FAULT_KINDS, CLUSTER_FAULT_KINDS, CLUSTER_REPLICA_FAULT_KINDS, FAULT_KINDS, SENTINEL_FAULT_KINDS, type FaultKind } from '../spec/kit/chaos/faults';
import { freshSeed } from '../spec/kit/chaos/prng';
import { runReport } from '../spec/kit/chaos/report';

type CommandLine = ChaosOptions & { report?: boolean };

/**
 * The command line, read by node:util's parseArgs (strict: an unknown option or a
 * missing value is an error naming it). A value starting with '-' is refused whichever
 * way the Node version tokenizes it: it is never a valid count here.
 */
function readCommandLine(argv: string[]): CommandLine {
  const usage = 'use --minutes N, --seconds N, --seed N, --workers N, --tasks N, --aof, --clock, --quorum, --cluster [--replicas], --semaphore, --rw, --fair, --multi, --sentinel [--sync-replicas], --faults kill,pause,..., --keep-logs, --report';
  let values: ReturnType<typeof parseCommandLine>['values'];
  try {
    ({ values } = parseCommandLine(argv));
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message.split('\n')[0] : String(error)} (${usage})`);
  }
  const positive = (flag: string, text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text) || value <= 0) throw new Error(`--${flag} needs a positive number, got '${text}'`);
    return value;
  };
  if (values.minutes !== undefined && values.seconds !== undefined) throw new Error('--minutes and --seconds exclude each other');
  if ([values.quorum, values.cluster, values.sentinel].filter(Boolean).length > 1) throw new Error('--quorum, --cluster and --sentinel exclude each other');
  if (values['sync-replicas'] && !values.sentinel) throw new Error('--sync-replicas goes with --sentinel');
  if (values.quorum && values.semaphore) throw new Error('--semaphore needs one Redis or --cluster: quorum mode has no semaphore');
  if (values.aof && (values.cluster || values.sentinel)) throw new Error('--aof goes with one Redis or --quorum');
  const opts: CommandLine = { verbose: true };
  if (values.seed !== undefined) {
    if (!/^\d+$/.test(values.seed)) throw new Error(`--seed needs a non-negative integer, got '${values.seed}'`);
    opts.seed = Number(values.seed);
  }
  if (values.aof) opts.aof = true;
  if (values.clock && (values.cluster || values.sentinel)) throw new Error('--clock goes with one Redis or --quorum');
  if (values.clock) opts.clock = true;
  if (values.report) {
    const other = Object.keys(values).filter((k) => !['report', 'minutes', 'seconds', 'seed'].includes(k));
    if (other.length > 0) throw new Error(`--report runs every mode with its own options: it takes only --minutes, --seconds and --seed (got --${other.join(', --')})`);
    opts.report = true;
  }
  const minutes = positive('minutes', values.minutes);
  const seconds = positive('seconds', values.seconds);
  if (minutes !== undefined) opts.durationMs = minutes * 60_000;
  if (seconds !== undefined) opts.durationMs = seconds * 1_000;
  const workers = positive('workers', values.workers);
  if (workers !== undefined) opts.workers = Math.round(workers);
  const tasks = positive('tasks', values.tasks);
  if (tasks !== undefined) opts.tasks = Math.round(tasks);
  if (values['keep-logs']) opts.keepLogs = true;
  if (values.semaphore) opts.semaphore = true;
  if (values.quorum) opts.mode = 'quorum';
  if (values.cluster) opts.mode = 'cluster';
  if (values.replicas && !values.cluster) throw new Error('--replicas goes with --cluster (Sentinel mode has its own replicas)');
  if (values.replicas) opts.replicas = true;
  if (values.rw) opts.readWrite = true;
  if (values.rw && values.quorum) throw new Error('--rw: read-write locks refuse quorum mode');
  if (values.multi && values.rw) throw new Error('--multi and --rw exclude each other: a multi-lock takes plain locks of the names the read-write locks use');
  if (values.multi) opts.multi = true;
  if (values.fair && (values.quorum || values.rw || values.multi || values.sentinel)) throw new Error('--fair goes with one Redis or --cluster, without --rw or --multi (fair locks refuse quorum mode; the others take other kinds on the same names)');
  if (values.fair) opts.fair = true;
  if (values.sentinel) opts.mode = 'sentinel';
  if (values['sync-replicas']) opts.syncReplicas = true;
  if (values.faults !== undefined) {
    const list = values.faults.split(',').filter(Boolean);
    const allowed = values.sentinel ? SENTINEL_FAULT_KINDS : values.cluster ? (values.replicas ? CLUSTER_REPLICA_FAULT_KINDS : CLUSTER_FAULT_KINDS) : values.clock ? CLOCK_FAULT_KINDS : values.aof ? AOF_FAULT_KINDS : FAULT_KINDS;
    const bad = list.filter((k) => !allowed.includes(k as FaultKind));
    if (list.length === 0 || bad.length > 0) throw new Error(`--faults takes a comma-separated list of ${allowed.join(', ')}, got '${values.faults}'`);
    opts.faults = list as FaultKind[];
  }
  return opts;
}

function parseCommandLine(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      minutes: { type: 'string' },
      seconds: { type: 'string' },
      seed: { type: 'string' },
      aof: { type: 'boolean' },
      clock: { type: 'boolean' },
      report: { type: 'boolean' },
      workers: { type: 'string' },
      tasks: { type: 'string' },
      faults: { type: 'string' },
      'keep-logs': { type: 'boolean' },
      quorum: { type: 'boolean' },
      cluster: { type: 'boolean' },
      replicas: { type: 'boolean' },
      semaphore: { type: 'boolean' },
      multi: { type: 'boolean' },
      rw: { type: 'boolean' },
      fair: { type: 'boolean' },
      sentinel: { type: 'boolean' },
      'sync-replicas': { type: 'boolean' },
    },
  });
}

const SAFETY_DOC = path.resolve(__dirname, '../docs/safety.md');
/** --report's time per mode unless --minutes or --seconds says otherwise. */
const REPORT_DEFAULT_MS = 5 * 60_000;

async function main(opts: CommandLine): Promise<number> {
  if (opts.report) {
    const seed = opts.seed ?? freshSeed();
    const { failed } = await runReport({ durationMs: opts.durationMs ?? REPORT_DEFAULT_MS, seed, file: SAFETY_DOC, verbose: true });
    process.stdout.write(`results table written to ${SAFETY_DOC}${failed.length > 0 ? `; violations in safe modes: ${failed.join(', ')}` : '; no violation in any safe mode'}\n`);
    return failed.length === 0 ? 0 : 1;
  }
  const result = await runChaos(opts);
  process.stdout.write(`${result.summary}\n`);
  return result.violations.length === 0 ? 0 : 1;
}

if (require.main === module) {
  let opts: CommandLine;
  try {
    opts = readCommandLine(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`chaos: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(64);
  }
  main(opts).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`chaos run failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 2;
    },
  );
}
