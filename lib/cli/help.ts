// The texts of --help and --version.
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_GRACE_MS, DEFAULT_LEASE_MS, DEFAULT_PREFIX, DEFAULT_REDIS_URL, MIN_LEASE_MS, PASSWORD_ENV } from './defaults.js';
import {
  EXIT_CANNOT_EXECUTE,
  EXIT_INTERNAL,
  EXIT_LOCK_BUSY,
  EXIT_LOCK_LOST,
  EXIT_NOT_FOUND,
  EXIT_UNAVAILABLE,
  EXIT_USAGE,
  REPORT_TO,
} from './exit-codes.js';

export type CommandName = 'exec' | 'status' | 'ls' | 'release';

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

export const MAIN_HELP: string = `holdfast ${version}: a distributed flock(1) on Redis

Usage:
  holdfast exec <name> [options] -- <command> [args...]
                            run a command while holding the lock <name>
  holdfast status <name> [--json]
                            who holds <name> (lock, readers, permits), its TTL,
                            its last fencing token
  holdfast ls [<pattern>] [--json]
                            the names held now (matching <pattern>)
  holdfast release <name> [--force]
                            ask the holders of <name> to let go; --force: delete it
  holdfast help <command> | <command> --help
                            the options and exit statuses of <command>
  holdfast --help | --version

exec runs <command> while holding the reentrant Redis lock <name> (see the
holdfast library), so that at most one such command runs at a time across every
machine that uses the same Redis. The lock is released when the command ends.

Example:
  holdfast exec nightly-report -n -- ./make-report.sh --since yesterday
`;

const CONNECTION_OPTIONS = `  --redis URL     Redis to use (redis://[user@]host:port[/db], or rediss:// for
                  TLS). Give it several times for quorum mode over independent
                  masters (Redlock-style: a majority must answer, and for exec
                  grant the lock). Default: $REDIS_URL, else ${DEFAULT_REDIS_URL}.
  --prefix P      Prefix of the Redis keys (default ${DEFAULT_PREFIX}, as in the library).
                  The lock's key is <prefix>{<name>}.
  --connect-timeout DURATION
                  How long to try to reach Redis at start. Default ${DEFAULT_CONNECT_TIMEOUT_MS / 1000} s.`;

const PASSWORD = `Password: set ${PASSWORD_ENV} (as for redis-cli); it is used for every URL that
carries none. A password in a URL (redis://:secret@host) works too, but every
user of the machine sees it in ps.`;

const DURATIONS = `Durations: a bare number is seconds (-w 5, -w 0.5); or with units ms, s, m, h,
largest first (250ms, 10s, 1m30s, 2h).`;

export const EXEC_HELP: string = `Usage: holdfast exec <name> [options] -- <command> [args...]

Takes the lock <name>, runs <command> with its arguments (directly, without a
shell; stdin, stdout and stderr are holdfast's), and releases the lock when the
command ends. Everything after -- is the command; -- is required.

Options:
  -w, --wait DURATION
                  How long to wait for the lock. Default: as long as it takes.
                  If the lock is not taken in time, the command is not run and
                  holdfast exits ${EXIT_LOCK_BUSY} (or the -E status).
  -n, --nonblock  Do not wait: one attempt (the same as -w 0).
  -E, --conflict-exit-code N
                  The exit status when the lock is busy (-n, -w ran out), 0-255.
                  Default ${EXIT_LOCK_BUSY}.
  --lease DURATION
                  The lease of the lock (default ${DEFAULT_LEASE_MS / 1000} s). It is not a limit
                  on the command: while holdfast runs, its watchdog renews the lease
                  every third of it, so the command may run for as long as it needs.
                  The lease is how long the lock outlives a holdfast that died
                  without releasing it (kill -9, power loss, network partition), and
                  how soon a failed renewal becomes a loss. At least ${MIN_LEASE_MS}ms.
  --grace DURATION
                  After a loss of the lock, how long the command has between SIGTERM
                  and SIGKILL. Default ${DEFAULT_GRACE_MS / 1000} s.
  --limit N       At most N commands at once instead of one: take a permit of the
                  semaphore <name> of N (its N must be the same on every host) instead
                  of the lock. Waits, -n, -E, the lease, signals, losses and exit
                  statuses are as for the lock; "busy" means all N permits are in use.
${CONNECTION_OPTIONS}
  -v, --verbose   Report on stderr when the lock is taken, renewed and released.
  -h, --help      This text.
${DURATIONS}

${PASSWORD}

The command's environment gets HOLDFAST_LOCK (the name) and HOLDFAST_TOKEN: the
fencing token of this hold, a number that grows with every acquisition of the
lock. Pass it to the storage the command writes, so that it can reject a writer
whose lock was lost (see "fencing tokens" in the holdfast documentation). With
--limit it gets HOLDFAST_PERMIT (the permit's id) and HOLDFAST_LIMIT instead of
HOLDFAST_TOKEN: permits carry no fencing token.

Signals: the command runs in a process group (and session) of its own, and
every signal that holdfast can catch (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
SIGUSR2, SIGWINCH, SIGALRM, ...) is passed on to that group once. So a Ctrl-C at
a terminal, which reaches holdfast's group, reaches the command once, as does a
kill to holdfast's pid, to its group, or from timeout(1). Received while
waiting for the lock, a signal that would end a process stops the wait and
holdfast exits 128+signal. Ctrl-Z (SIGTSTP, SIGTTIN, SIGTTOU) stops the command
(SIGSTOP) and then holdfast; SIGCONT resumes both; while stopped the lease is not
renewed, so a long stop may lose the lock. Not passed on: SIGCHLD and SIGPIPE
(holdfast's own), and SIGKILL and SIGSTOP, which no process can catch: after
kill -9 the command runs on unguarded and the lock expires one lease later.
Under systemd, set KillMode=mixed so that only holdfast gets the SIGTERM.
The command has no controlling terminal: a program that opens /dev/tty (ssh or
sudo asking for a password) cannot.

Asked to let go (holdfast release <name>, lock.requestRelease()): holdfast sends
SIGTERM to the command's group, then SIGKILL after --grace, releases the lock
when the command has exited, and exits with the command's status (nothing was
lost), or ${EXIT_LOCK_LOST} if the lock was lost too before the command ended. A holder
running a holdfast version without this is not asked.

Losing the lock: if renewing fails until the lease ends (Redis unreachable), or
the key is deleted or taken (holdfast release --force), holdfast reports it on
stderr, sends SIGTERM to the command's group, then SIGKILL after --grace, and
exits ${EXIT_LOCK_LOST}. holdfast never exits while the command it started still runs.

Exit status:
  the command's   when it ran and the lock was held throughout (128+N if it
                  died of signal N)
  ${EXIT_USAGE}              bad usage
  ${EXIT_UNAVAILABLE}              Redis unreachable (or a quorum of masters unreachable), or no
                  client library installed (ioredis or iovalkey)
  ${EXIT_LOCK_LOST}              the lock was lost while the command ran
  ${EXIT_INTERNAL}              holdfast failed (a bug: please report it at ${REPORT_TO});
                  the command was stopped
  ${EXIT_LOCK_BUSY}              the lock was busy: not taken within --wait, or at once with -n
  ${EXIT_CANNOT_EXECUTE} / ${EXIT_NOT_FOUND}        the command could not be executed / was not found
  128+N           holdfast was stopped by signal N while waiting for the lock

Examples:
  holdfast exec deploy -- ./deploy.sh production
  holdfast exec backup -n --lease 10s -- pg_dump -f /backups/db.sql db
  holdfast exec report -w 1m30s -E 0 -- ./report.sh      # busy: exit 0, skip
  holdfast exec reindex --limit 2 -- ./reindex.sh        # at most 2 hosts at once
  REDISCLI_AUTH=secret holdfast exec migrate --redis redis://a:6379 \\
    --redis redis://b:6379 --redis redis://c:6379 -- npm run migrate
`;

const ADMIN_STATUS = `Exit status: 0 when Redis answered, ${EXIT_UNAVAILABLE} when it could not be reached (or
no quorum answered), ${EXIT_USAGE} for bad usage, ${EXIT_INTERNAL} if holdfast failed.`;

export const STATUS_HELP: string = `Usage: holdfast status <name> [--json] [options]

Shows whether <name> is locked, by whom (owner id, host, pid, reentry count),
the TTL of its lease, the last fencing token minted for it, and how many wait
(known where waiters queue in Redis). A read-write lock's writer shows as the
lock; its readers, and a semaphore's permits (holder, count, TTL, the limit and
how many wait), show too when <name> has some (one master only: quorum mode has
neither). With --json, prints lock.inspect()'s object:
{ "name", "locked", "ttl", "token", "holders": [{ "owner", "host", "pid",
"count" }], "waiters" } (ttl in ms, -2 when the key is absent; waiters null
when not known), with "read" (readLock().inspect()'s object) when readers hold
<name> and "semaphore" (getSemaphore().inspect()'s: { "name", "limit", "used",
"holders": [{ "id", "host", "pid", "permits", "ttl" }], "waiters" }) when
permits are held or waited for.

Options:
  --json          The object above, on one line.
${CONNECTION_OPTIONS}
  -h, --help      This text.
${DURATIONS}

${PASSWORD}

${ADMIN_STATUS}
`;

export const LS_HELP: string = `Usage: holdfast ls [<pattern>] [--json] [options]

Lists the names held now that match <pattern> (a Redis MATCH pattern:
* ? [abc], \\ escapes; default *), sorted, one line per kind of hold (lock,
read, semaphore used/limit) with its holders and TTL.
It walks the keys with SCAN (never KEYS, which blocks Redis), so it is safe on
a busy server; a lock taken or released during the walk may be missed or shown.
With several --redis (quorum), a lock is listed when a majority holds it.

Options:
  --json          An array of the objects holdfast status --json prints, one
                  per name held (free ones left out), sorted by name.
${CONNECTION_OPTIONS}
  -h, --help      This text.
${DURATIONS}

${PASSWORD}

${ADMIN_STATUS}
`;

export const RELEASE_HELP: string = `Usage: holdfast release <name> [--force] [options]

Without --force, asks every holder of <name> to let go (lock.requestRelease(),
and on one master the readers' and the semaphore's: requestRelease()) and says
how many holds were asked; nothing is deleted. A holdfast exec holding it sends
SIGTERM to its command, releases when the command exits and exits with its
status. A holder running a holdfast version without this is not asked.

With --force, deletes <name> whoever holds it (forceUnlock(), and the
semaphore's forceRelease()), and says what was held and by whom. The holder hears it at once when
reachable and loses the lock: a holdfast exec holding it stops its command and
exits ${EXIT_LOCK_LOST}. For a lock left by a holder that is stuck, or to take over by
hand; a lock whose holder died expires by itself one lease after its last renewal.

Options:
  --force         Delete the lock instead of asking its holders.
${CONNECTION_OPTIONS}
  -h, --help      This text.
${DURATIONS}

${PASSWORD}

${ADMIN_STATUS}
`;

export const COMMAND_HELP: Record<CommandName, string> = { exec: EXEC_HELP, status: STATUS_HELP, ls: LS_HELP, release: RELEASE_HELP };
