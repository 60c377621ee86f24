/**
 * The chaos run's command line: `npm run chaos -- [options]` (see spec/kit/chaos/run.ts
 * for what a run does, and docs/guides/developing.md).
 */
import { parseArgs } from 'node:util';
import { runChaos, type ChaosOptions } from '../spec/kit/chaos/run';
import { FAULT_KINDS, SENTINEL_FAULT_KINDS, type FaultKind } from '../spec/kit/chaos/history';

/**
 * The command line, read by node:util's parseArgs (strict: an unknown option or a
 * missing value is an error naming it). A value starting with '-' is refused whichever
 * way the Node version tokenizes it: it is never a valid count here.
 */
function readCommandLine(argv: string[]): ChaosOptions {
  const usage = 'use --minutes N, --seconds N, --workers N, --tasks N, --quorum, --cluster, --semaphore, --rw, --fair, --multi, --sentinel [--sync-replicas], --faults kill,pause,..., --keep-logs';
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
  const opts: ChaosOptions = { verbose: true };
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
    const allowed = values.sentinel ? SENTINEL_FAULT_KINDS : FAULT_KINDS;
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
      workers: { type: 'string' },
      tasks: { type: 'string' },
      faults: { type: 'string' },
      'keep-logs': { type: 'boolean' },
      quorum: { type: 'boolean' },
      cluster: { type: 'boolean' },
      semaphore: { type: 'boolean' },
      multi: { type: 'boolean' },
      rw: { type: 'boolean' },
      fair: { type: 'boolean' },
      sentinel: { type: 'boolean' },
      'sync-replicas': { type: 'boolean' },
    },
  });
}

if (require.main === module) {
  let opts: ChaosOptions;
  try {
    opts = readCommandLine(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`chaos: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(64);
  }
  runChaos(opts).then(
    (result) => {
      process.stdout.write(`${result.summary}\n`);
      process.exitCode = result.violations.length === 0 ? 0 : 1;
    },
    (error: unknown) => {
      process.stderr.write(`chaos run failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 2;
    },
  );
}
