#!/usr/bin/env node
/**
 * `holdfast`: a distributed flock(1). Runs a command while holding a holdfast lock.
 *
 *   holdfast exec <name> [options] -- <command> [args...]
 *
 * Built by tsc into dist/cjs/cli.js (the shebang above is kept) and published as the
 * package's `bin`. Arguments are parsed by hand: no dependencies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import Redis from 'ioredis';
import { LockClient } from './client.js';
import { LockError } from './errors/LockError.js';
import { LockLostError } from './errors/LockLostError.js';
import { QuorumError } from './errors/QuorumError.js';
import { MIN_LEASE } from './options.js';
import fs from 'node:fs';
import path from 'node:path';

// ---- exit statuses (sysexits.h where one fits) ---------------------------------------

/** The command's own status is passed through; these are holdfast's own. */
export const EXIT_OK = 0;
/** Bad command line (EX_USAGE). */
export const EXIT_USAGE = 64;
/** Redis could not be reached, or failed while taking the lock (EX_UNAVAILABLE). */
export const EXIT_UNAVAILABLE = 69;
/** The lock was lost while the command ran; the command was stopped (EX_SOFTWARE). */
export const EXIT_LOCK_LOST = 70;
/** The lock could not be taken within --wait (EX_TEMPFAIL). */
export const EXIT_LOCK_BUSY = 75;
/** The command exists but could not be executed (as in POSIX shells). */
export const EXIT_CANNOT_EXECUTE = 126;
/** The command was not found (as in POSIX shells). */
export const EXIT_NOT_FOUND = 127;
/** A process that died of signal N exits 128 + N (as in POSIX shells). */
export const EXIT_SIGNAL_BASE = 128;

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_GRACE_MS = 5_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** How long releasing and disconnecting may take before holdfast exits regardless. */
const SHUTDOWN_BOUND_MS = 10_000;

/** Signals forwarded to the command (and that interrupt a wait for the lock). */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

// ---- help -----------------------------------------------------------------------------

/** The package's version, from holdfast's package.json above this file (lib/ or dist/cjs/). */
const version = ((): string => {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'holdfast' && pkg.version) return pkg.version; // dist/cjs has a bare { type } file
  }
  return 'unknown';
})();

export const MAIN_HELP = `holdfast ${version}: a distributed flock(1) on Redis

Usage:
  holdfast exec <name> [options] -- <command> [args...]
  holdfast exec --help      details of exec: options, lease, signals, exit statuses
  holdfast --help | --version

Runs <command> while holding the reentrant Redis lock <name> (see the holdfast
library), so that at most one such command runs at a time across every machine
that uses the same Redis. The lock is released when the command ends.

Example:
  holdfast exec nightly-report --wait 0 -- ./make-report.sh --since yesterday
`;

export const EXEC_HELP = `Usage: holdfast exec <name> [options] -- <command> [args...]

Takes the lock <name>, runs <command> with its arguments (directly, without a
shell; stdin, stdout and stderr are the terminal's), and releases the lock when
the command ends. Everything after -- is the command; -- is required.

Options:
  --redis URL     Redis to lock on (redis://[user:password@]host:port[/db], or
                  rediss:// for TLS). Give it 3 or more times for quorum mode over
                  independent masters (Redlock-style: a majority must grant the
                  lock). Default: $REDIS_URL, else ${DEFAULT_REDIS_URL}.
  --wait MS       How long to wait for the lock. Default: wait as long as it takes.
                  --wait 0 makes one attempt. If the lock is not taken in time,
                  the command is not run and holdfast exits ${EXIT_LOCK_BUSY}.
  --lease MS      The lease of the lock (default ${DEFAULT_LEASE_MS}). It is not a limit
                  on the command: while holdfast runs, its watchdog renews the lease
                  every third of it, so the command may run for as long as it needs.
                  The lease is how long the lock outlives a holdfast that died
                  without releasing it (kill -9, power loss, network partition), and
                  how soon a failed renewal becomes a loss. At least ${MIN_LEASE}.
  --grace MS      After a loss of the lock, how long the command has between SIGTERM
                  and SIGKILL. Default ${DEFAULT_GRACE_MS}.
  --prefix P      Prefix of the Redis keys (default holdfast:, as in the library).
                  The lock's key is <prefix>{<name>}.
  --connect-timeout MS
                  How long to try to reach Redis at start. Default ${DEFAULT_CONNECT_TIMEOUT_MS}.
  -v, --verbose   Report on stderr when the lock is taken, renewed and released.
  -h, --help      This text.
Times are milliseconds; a suffix ms, s, m or h may be given (--wait 10s).

The command's environment gets HOLDFAST_LOCK (the name) and HOLDFAST_TOKEN: the
fencing token of this hold, a number that grows with every acquisition of the
lock. Pass it to the storage the command writes, so that it can reject a writer
whose lock was lost (see "fencing tokens" in the holdfast documentation).

Signals: SIGINT, SIGTERM and SIGHUP sent to holdfast are forwarded to the command
(only to its process: a shell script should exec its last command, or trap and
pass them on); holdfast releases the lock when the command has ended. Received
while waiting for the lock, they stop the wait and holdfast exits 128+signal.
If holdfast itself is killed with SIGKILL, the command keeps running unguarded
and the lock expires one lease later.

Losing the lock: if renewing fails until the lease ends (Redis unreachable), or
the key is deleted or taken (e.g. forceUnlock), holdfast reports it on stderr,
sends SIGTERM to the command, then SIGKILL after --grace, and exits ${EXIT_LOCK_LOST}.

Exit status:
  the command's   when it ran and the lock was held throughout (128+N if it
                  died of signal N)
  ${EXIT_USAGE}              bad usage
  ${EXIT_UNAVAILABLE}              Redis unreachable (or a quorum of masters unreachable)
  ${EXIT_LOCK_LOST}              the lock was lost while the command ran
  ${EXIT_LOCK_BUSY}              the lock was not taken within --wait
  ${EXIT_CANNOT_EXECUTE} / ${EXIT_NOT_FOUND}        the command could not be executed / was not found
  128+N           holdfast was stopped by signal N while waiting for the lock

Examples:
  holdfast exec deploy -- ./deploy.sh production
  holdfast exec backup --wait 0 --lease 10s -- pg_dump -f /backups/db.sql db
  holdfast exec migrate --redis redis://a:6379 --redis redis://b:6379 \\
    --redis redis://c:6379 -- npm run migrate
`;

// ---- arguments ------------------------------------------------------------------------

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface ExecOptions {
  name: string;
  urls: string[];
  /** undefined: wait until held. */
  wait: number | undefined;
  lease: number;
  grace: number;
  prefix: string | undefined;
  connectTimeout: number;
  verbose: boolean;
  command: string;
  args: string[];
}

export type Parsed = { kind: 'help'; text: string } | { kind: 'version' } | { kind: 'exec'; options: ExecOptions };

const UNITS: Record<string, number> = { '': 1, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** '250', '250ms', '1.5s', '2m', '1h' -> milliseconds. */
export function parseDuration(flag: string, text: string, min: number): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new UsageError(`${flag} takes a number of milliseconds (or with a unit: 500ms, 10s, 5m, 1h), got '${text}'`);
  const ms = Math.round(Number(m[1]) * UNITS[m[2] ?? '']);
  if (!Number.isSafeInteger(ms)) throw new UsageError(`${flag} is too large: '${text}'`);
  if (ms < min) throw new UsageError(`${flag} must be at least ${min} ms, got '${text}'`);
  return ms;
}

function checkUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--redis takes a URL like redis://host:6379, got '${text}'`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new UsageError(`--redis takes a redis:// or rediss:// URL, got '${text}'`);
  }
  return text;
}

/** Parses argv (without `node` and the script). Throws UsageError on bad usage. */
export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError('missing command: holdfast exec <name> -- <command>');
  if (first === '-h' || first === '--help' || first === 'help') {
    return { kind: 'help', text: rest[0] === 'exec' ? EXEC_HELP : MAIN_HELP };
  }
  if (first === '-V' || first === '--version') return { kind: 'version' };
  if (first !== 'exec') throw new UsageError(`unknown command '${first}' (the command is exec: holdfast exec <name> -- <command>)`);

  const urls: string[] = [];
  let name: string | undefined;
  let wait: number | undefined;
  let lease = DEFAULT_LEASE_MS;
  let grace = DEFAULT_GRACE_MS;
  let prefix: string | undefined;
  let connectTimeout = DEFAULT_CONNECT_TIMEOUT_MS;
  let verbose = false;
  let command: string[] | undefined;

  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--') {
      command = rest.slice(i + 1);
      break;
    }
    if (arg === '-h' || arg === '--help') return { kind: 'help', text: EXEC_HELP };
    if (arg === '-v' || arg === '--verbose') {
      verbose = true;
      continue;
    }
    if (arg.startsWith('-') && arg !== '-') {
      const eq = arg.indexOf('=');
      const flag = eq > 0 ? arg.slice(0, eq) : arg;
      const known = ['--redis', '--wait', '--lease', '--grace', '--prefix', '--connect-timeout'];
      if (!known.includes(flag)) throw new UsageError(`unknown option '${flag}'`);
      let value: string;
      if (eq > 0) value = arg.slice(eq + 1);
      else {
        const next = rest[i + 1];
        if (next === undefined || next === '--') throw new UsageError(`${flag} needs a value`);
        value = next;
        i += 1;
      }
      switch (flag) {
        case '--redis':
          urls.push(checkUrl(value));
          break;
        case '--wait':
          wait = parseDuration(flag, value, 0);
          break;
        case '--lease':
          lease = parseDuration(flag, value, MIN_LEASE);
          break;
        case '--grace':
          grace = parseDuration(flag, value, 0);
          break;
        case '--connect-timeout':
          connectTimeout = parseDuration(flag, value, 1);
          break;
        case '--prefix':
          if (/[{}]/.test(value)) throw new UsageError('--prefix must not contain { or }: the lock name goes in the hash tag');
          prefix = value;
          break;
      }
      continue;
    }
    if (name !== undefined) {
      throw new UsageError(`unexpected argument '${arg}': put the command after --, as in holdfast exec ${name} -- ${arg}`);
    }
    name = arg;
  }
  if (name === undefined || name === '') throw new UsageError('missing lock name: holdfast exec <name> -- <command>');
  if (name.length > 1024) throw new UsageError('the lock name must be at most 1024 characters');
  if (command === undefined) throw new UsageError('missing -- and the command to run: holdfast exec <name> -- <command>');
  if (command.length === 0 || command[0] === '') throw new UsageError('missing the command after --');
  if (urls.length === 0) urls.push(checkUrl(env.REDIS_URL || DEFAULT_REDIS_URL));
  if (new Set(urls).size !== urls.length) throw new UsageError('the same --redis URL is given twice: quorum mode needs independent masters');
  return { kind: 'exec', options: { name, urls, wait, lease, grace, prefix, connectTimeout, verbose, command: command[0], args: command.slice(1) } };
}

// ---- running --------------------------------------------------------------------------

/** Where holdfast writes its messages; replaceable for tests. */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const defaultIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

function signalNumber(signal: NodeJS.Signals): number {
  return osConstants.signals[signal] ?? 0;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A URL as shown in messages: without its password. */
function showUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
  }
}

/**
 * Opens a connection and waits until it is ready. Rejects with the first connection
 * error (refused, unknown host, auth) or after `timeout`; on success the connection
 * keeps reconnecting in the background if Redis goes away later.
 */
function connect(url: string, timeout: number, signal: AbortSignal): { redis: Redis; ready: Promise<void> } {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeout,
    // A command sent while the connection is down fails after one reconnection attempt
    // instead of queueing forever; holdfast bounds each call on top of this.
    maxRetriesPerRequest: 1,
    // Keep reconnecting (while the command runs, a short Redis outage must not lose
    // the lock before its lease ends), at most once a quarter second.
    retryStrategy: (times) => Math.min(50 * times, 250),
    // disconnect() waits this long for the server to close its end: an unresponsive
    // server must not keep holdfast from exiting.
    disconnectTimeout: 200,
  });
  const ready = new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (error?: Error) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const onError = (error: Error) => done(new Error(`cannot connect to ${showUrl(url)}: ${message(error)}`));
    const onAbort = () => done(signal.reason as Error);
    timer = setTimeout(() => done(new Error(`cannot connect to ${showUrl(url)}: no answer within ${timeout} ms`)), timeout);
    redis.once('ready', onReady);
    redis.on('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
    redis.connect().catch(() => undefined); // the 'error' event carries the reason
  });
  return { redis, ready };
}

/**
 * Runs `holdfast exec`: connect, take the lock, run the command, release. Resolves
 * with the exit status; never rejects.
 */
export async function exec(o: ExecOptions, io: Io = defaultIo): Promise<number> {
  const say = (text: string) => io.stderr(`holdfast: ${text}\n`);
  const verbose = (text: string) => o.verbose && say(text);
  const quorumMode = o.urls.length > 1;
  const connections: Redis[] = [];
  let locks: LockClient | undefined;

  // Signals: interrupt the connection or the wait, then go to the command once it runs.
  const interrupt = new AbortController();
  let child: ChildProcess | undefined;
  let childRunning = false;
  let shuttingDown = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (childRunning && child) {
      verbose(`forwarding ${sig} to the command (pid ${child.pid})`);
      child.kill(sig);
    } else if (!interrupt.signal.aborted && !shuttingDown) {
      interrupt.abort(new Interrupted(sig));
    } else if (shuttingDown) {
      // A second signal while releasing: stop waiting for Redis; the lease ends it.
      say(`${sig} while releasing '${o.name}': exiting now; the lock expires within ${o.lease} ms`);
      process.exit(EXIT_SIGNAL_BASE + signalNumber(sig));
    }
  };
  for (const sig of FORWARDED) process.on(sig, onSignal);

  const cleanup = async () => {
    shuttingDown = true;
    await locks?.close().catch(() => undefined);
    for (const c of connections) c.disconnect();
    for (const sig of FORWARDED) process.off(sig, onSignal);
  };

  try {
    // ---- connect
    const attempts = o.urls.map((url) => connect(url, o.connectTimeout, interrupt.signal));
    for (const a of attempts) {
      connections.push(a.redis);
      // Later errors (a reconnecting connection) are reported through renewal events.
      a.redis.on('error', () => undefined);
    }
    const results = await Promise.allSettled(attempts.map((a) => a.ready));
    if (interrupt.signal.aborted) throw interrupt.signal.reason;
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [message(r.reason)] : []));
    const needed = Math.floor(o.urls.length / 2) + 1;
    if (o.urls.length - failures.length < needed) {
      for (const f of failures) say(f);
      if (quorumMode) say(`${needed} of ${o.urls.length} masters are needed; ${o.urls.length - failures.length} reachable`);
      return EXIT_UNAVAILABLE;
    }
    for (const f of failures) say(`warning: ${f} (continuing with a majority of masters)`);

    // ---- take the lock
    locks = new LockClient(quorumMode ? connections : connections[0], {
      watchdogTimeout: o.lease,
      ...(o.prefix === undefined ? {} : { keyPrefix: o.prefix }),
    });
    locks.on('error', (error) => say(`warning: ${message(error)}`));
    const lock = locks.getLock(o.name);
    let token: number | undefined;
    let lost: LockLostError | undefined;
    let onLost: ((error: LockLostError) => void) | undefined;
    lock.on('acquired', (e) => {
      token = e.token;
      verbose(`acquired '${o.name}' (token ${e.token}) after ${Math.round(e.waitedMs)} ms`);
    });
    lock.on('renewed', (e) => verbose(`renewed '${o.name}' (lease ${e.leaseTime} ms)`));
    lock.on('renewalFailed', (e) => say(`warning: renewing '${o.name}' failed (attempt ${e.attempt}): ${message(e.error)}`));
    lock.on('lost', (e) => {
      lost ??= e.error instanceof LockLostError ? e.error : new LockLostError(o.name, e.owner, e.reason);
      onLost?.(lost);
    });

    const code = await locks.scope(async (): Promise<number> => {
      const waitStart = performance.now();
      let held: boolean;
      try {
        if (o.wait === undefined) {
          verbose(`waiting for '${o.name}'`);
          await lock.lock({ signal: interrupt.signal });
          held = true;
        } else {
          held = await lock.tryLock({ waitTime: o.wait, signal: interrupt.signal });
        }
      } catch (error) {
        if (error instanceof Interrupted) throw error;
        say(`cannot take '${o.name}': ${describeFailure(error)}`);
        return EXIT_UNAVAILABLE;
      }
      if (!held) {
        say(`lock '${o.name}' is held by another owner; not taken within ${o.wait} ms${o.wait === 0 ? ' (--wait 0: one attempt)' : ''}`);
        return EXIT_LOCK_BUSY;
      }
      verbose(`holding '${o.name}' (waited ${Math.round(performance.now() - waitStart)} ms); running ${o.command}`);
      let status: number;
      // The loss that counts is one before the command ended: after that, it ran under the lock.
      let lostInTime: LockLostError | undefined;
      try {
        status = lost ? EXIT_LOCK_LOST : await runCommand();
        lostInTime = lost;
      } finally {
        // Release: at most one level is held. After a loss unlock() rejects at once and
        // touches nothing in Redis (the key may be someone else's by now).
        try {
          await lock.unlock();
          verbose(`released '${o.name}'`);
        } catch (error) {
          if (!(error instanceof LockLostError)) say(`warning: ${message(error)}`);
        }
      }
      if (lostInTime) {
        say(`exiting ${EXIT_LOCK_LOST}: lock '${o.name}' was lost (${lostInTime.reason}) before the command ended`);
        return EXIT_LOCK_LOST;
      }
      return status;

      function runCommand(): Promise<number> {
        return new Promise<number>((resolve) => {
          // A signal that came between the grant and now: do not start the command.
          const early = interrupt.signal.reason as unknown;
          if (early instanceof Interrupted) {
            say(`${early.signal} before the command started: not running it`);
            return resolve(EXIT_SIGNAL_BASE + signalNumber(early.signal));
          }
          let killTimer: NodeJS.Timeout | undefined;
          const env = { ...process.env, HOLDFAST_LOCK: o.name, HOLDFAST_TOKEN: String(token ?? '') };
          const c = spawn(o.command, o.args, { stdio: 'inherit', env });
          child = c;
          childRunning = true;
          const finish = (status: number) => {
            childRunning = false;
            onLost = undefined;
            clearTimeout(killTimer);
            resolve(status);
          };
          c.once('error', (error: NodeJS.ErrnoException) => {
            if (!childRunning) return;
            say(`cannot run '${o.command}': ${error.message}`);
            finish(error.code === 'ENOENT' ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE);
          });
          c.once('exit', (exitCode, sig) => {
            if (!childRunning) return;
            if (sig) verbose(`the command died of ${sig}`);
            finish(sig ? EXIT_SIGNAL_BASE + signalNumber(sig) : (exitCode ?? EXIT_LOCK_LOST));
          });
          onLost = (error) => {
            if (!childRunning) return;
            say(`${error.message} (reason: ${error.reason}); stopping the command (pid ${c.pid}): SIGTERM now, SIGKILL in ${o.grace} ms`);
            c.kill('SIGTERM');
            killTimer = setTimeout(() => {
              if (!childRunning) return;
              say(`the command did not end within ${o.grace} ms of SIGTERM: SIGKILL`);
              c.kill('SIGKILL');
            }, o.grace);
          };
        });
      }
    });
    return code;
  } catch (error) {
    if (error instanceof Interrupted) {
      say(`${error.signal} while waiting for '${o.name}': the command was not run`);
      return EXIT_SIGNAL_BASE + signalNumber(error.signal);
    }
    say(`unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return EXIT_LOCK_LOST;
  } finally {
    await cleanup();
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof QuorumError) return error.message;
  if (error instanceof LockError) {
    const cause = error.cause === undefined ? '' : ` (${message(error.cause)})`;
    return `${error.message}${cause}`;
  }
  return `Redis error: ${message(error)}`;
}

/** The whole program: parse, run, exit status. */
export async function main(argv: readonly string[], io: Io = defaultIo): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`holdfast: ${error.message}\nTry 'holdfast --help' or 'holdfast exec --help'.\n`);
    return EXIT_USAGE;
  }
  switch (parsed.kind) {
    case 'help':
      io.stdout(parsed.text);
      return EXIT_OK;
    case 'version':
      io.stdout(`${version}\n`);
      return EXIT_OK;
    case 'exec':
      return exec(parsed.options, io);
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // Everything is closed by now, so the process ends by itself; this is only a
      // bound in case some handle was left open.
      setTimeout(() => process.exit(code), SHUTDOWN_BOUND_MS).unref();
    },
    (error: unknown) => {
      process.stderr.write(`holdfast: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(EXIT_LOCK_LOST);
    },
  );
}
