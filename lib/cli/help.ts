// The texts of --help and --version.
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_GRACE_MS, DEFAULT_LEASE_MS, DEFAULT_REDIS_URL, MIN_LEASE_MS } from './defaults.js';
import { EXIT_CANNOT_EXECUTE, EXIT_LOCK_BUSY, EXIT_LOCK_LOST, EXIT_NOT_FOUND, EXIT_UNAVAILABLE, EXIT_USAGE } from './exit-codes.js';

/**
 * The package's version, from holdfast's package.json above this file (lib/cli/ or
 * dist/cjs/cli/). dist/cjs has a bare { "type": "commonjs" } package.json on the way
 * up, hence the check of the name.
 */
export const version = ((): string => {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'holdfast' && pkg.version) return pkg.version;
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
                  how soon a failed renewal becomes a loss. At least ${MIN_LEASE_MS}.
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
