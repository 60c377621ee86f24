import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { LockClient, type LockInfo, type SemaphoreInfo } from '../../lib';
import type { NameStatus } from '../../lib/cli/kinds';
import { parseCommandLine, parseDuration, UsageError } from '../../lib/cli/args';
import { EXIT_INTERNAL, EXIT_LOCK_BUSY, EXIT_LOCK_LOST, EXIT_NOT_FOUND, EXIT_UNAVAILABLE, EXIT_USAGE } from '../../lib/cli/exit-codes';
import { escapeGlob, globRegExp, heldKeyOf, lockNameOf } from '../../lib/cli/ls';
import { freePort, startMasters, startServer, type RedisServer } from '../kit/servers';
import { TcpProxy } from '../kit/proxy';
import { nextEvent, waitFor, withTimeout } from '../helpers/wait';

// `holdfast`, the bin: run from source (node -r tsx/cjs), as a user runs
// dist/cjs/cli/index.js, with its stdio piped here. The commands it runs are small node or
// sh scripts that report on stdout and wait for stdin or a signal: no fixed sleeps here.
// HOLDFAST_SPEC_CLI=path drives another entry point instead (dist/cjs/cli/index.js, or
// an older version's lib/cli/index.ts to see which specs it fails).

const ROOT = path.resolve(__dirname, '..', '..');
const ENTRY = process.env.HOLDFAST_SPEC_CLI ?? 'lib/cli/index.ts';
const EXIT_BOUND = 15_000;
const linux = process.platform === 'linux';

let server: RedisServer;
let redis: Redis;
let tmp: string;
let n = 0;
const name = () => `cli-${process.pid}-${++n}`;
const key = (lockName: string, prefix = 'holdfast:') => `${prefix}{${lockName}}`;
const running = new Set<Cli>();
const clients: LockClient[] = [];

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
}

class Cli {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  private readonly started = performance.now();
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  /** Resolves when its stdout and stderr are closed too (the command's included). */
  readonly closed: Promise<Exit>;

  constructor(args: string[], env: NodeJS.ProcessEnv = {}, opts: SpawnOptions = {}) {
    this.child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '-r', 'tsx/cjs', ENTRY, ...args], {
      cwd: ROOT,
      // REDIS_URL points at the spec's server, so that a default can never reach 6379;
      // no password from the environment the specs run in.
      env: { ...process.env, REDIS_URL: server.url, REDISCLI_AUTH: '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // A process group (and session) of its own, led by holdfast, like a job a shell
      // starts: a signal sent to the group is what a terminal's Ctrl-C does.
      detached: opts.detached ?? false,
    });
    this.child.stdout!.setEncoding('utf8').on('data', (s: string) => (this.stdout += s));
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr += s));
    this.child.stdin!.on('error', () => undefined);
    running.add(this);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        running.delete(this);
        resolve({ code, signal, ms: performance.now() - this.started });
      });
    });
    this.closed = new Promise((resolve) => {
      this.child.once('close', (code, signal) => resolve({ code, signal, ms: performance.now() - this.started }));
    });
  }

  /** Waits for a line of stdout (or stderr) matching re. */
  async output(re: RegExp, what = re.source, timeout = 10_000): Promise<string> {
    return (await waitFor<string | undefined>(() => re.exec(this.stdout)?.[0] ?? re.exec(this.stderr)?.[0], {
      timeout,
      interval: 10,
      message: `holdfast output matching /${what}/ (stdout: ${JSON.stringify(this.stdout)}, stderr: ${JSON.stringify(this.stderr)})`,
    })) as string;
  }

  /** The exit, after the output is complete; fails past `bound`. */
  async result(bound = EXIT_BOUND): Promise<Exit> {
    return withTimeout(this.closed, bound, `holdfast ${this.child.spawnargs.slice(4).join(' ')} (stderr: ${JSON.stringify(this.stderr)})`);
  }

  /** Sends `signal` to holdfast's process group (spawned with detached: true), as a terminal does. */
  signalGroup(signal: NodeJS.Signals): void {
    process.kill(-this.child.pid!, signal);
  }
}

interface SpawnOptions {
  detached?: boolean;
  /** Options for the node running holdfast (a -r fixture), before the entry point. */
  nodeArgs?: string[];
}

function holdfast(args: string[], env?: NodeJS.ProcessEnv, opts?: SpawnOptions): Cli {
  return new Cli(args, env, opts);
}

function client(connection: Redis = redis, options?: ConstructorParameters<typeof LockClient>[1]): LockClient {
  const c = new LockClient(connection, options);
  clients.push(c);
  return c;
}

/**
 * A command (node -e) that prints "ready <name> <token> pid <pid>", then ends on a line
 * on stdin with status 0. Each signal in `record` (default SIGTERM, SIGINT, SIGHUP) is
 * appended to `file` by name, one a line; those in `exitOn` (default: the same) then
 * end it with status 42. With ignoreTerm it notes SIGTERM and keeps running.
 */
function command(file: string, opts: { ignoreTerm?: boolean; record?: string[]; exitOn?: string[] } = {}): string[] {
  const record = opts.record ?? ['SIGTERM', 'SIGINT', 'SIGHUP'];
  const exitOn = (opts.exitOn ?? record).filter((s) => !(opts.ignoreTerm && s === 'SIGTERM'));
  const script = `
    const fs = require('fs');
    const file = process.argv[1];
    const exitOn = ${JSON.stringify(exitOn)};
    for (const s of ${JSON.stringify(record)}) process.on(s, () => {
      fs.appendFileSync(file, s + '\\n');
      if (exitOn.includes(s)) process.exit(42);
    });
    process.stdin.on('data', () => process.exit(0));
    process.stdout.write('ready ' + process.env.HOLDFAST_LOCK + ' ' + process.env.HOLDFAST_TOKEN + ' pid ' + process.pid + '\\n');
  `;
  return [process.execPath, '-e', script, file];
}

/** The state letter of a process from /proc (R, S, T for stopped, ...); '' when it is gone. */
function procState(pid: number): string {
  try {
    return /^\d+ \(.*\) (\S)/.exec(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1] ?? '';
  } catch {
    return '';
  }
}

/** The pid the command printed in its ready line. */
async function commandPid(cli: Cli): Promise<number> {
  return Number(/pid (\d+)/.exec(await cli.output(/ready .* pid \d+/))![1]);
}

const numsub = async (lockName: string, connection = redis) => Number((await connection.pubsub('NUMSUB', `${key(lockName)}:next`))[1]);

function read(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-cli-'));
});

afterEach(async () => {
  // A failed spec may leave a holdfast running: its command gets the SIGTERM, then both die.
  for (const cli of [...running]) {
    cli.child.kill('SIGTERM');
    const gone = await Promise.race([cli.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 3_000).unref())]);
    if (!gone) cli.child.kill('SIGKILL');
  }
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('arguments', () => {
  it('parses exec with every option, in any order, and the command after --', () => {
    const parsed = parseCommandLine(
      ['exec', '-w', '2', 'jobs', '--redis', 'redis://a:1', '--redis=redis://b:2', '--redis', 'redis://c:3', '--lease', '600ms', '--grace=250ms', '--prefix', 'p:', '-v', '-E', '3', '--connect-timeout', '1.5', '--', 'cmd', '--wait', '--', 'x'],
      { REDISCLI_AUTH: 'secret' },
    );
    expect(parsed).toEqual({
      kind: 'exec',
      options: {
        name: 'jobs',
        urls: ['redis://a:1', 'redis://b:2', 'redis://c:3'],
        password: 'secret',
        wait: 2_000,
        conflictExitCode: 3,
        lease: 600,
        grace: 250,
        prefix: 'p:',
        connectTimeout: 1_500,
        verbose: true,
        warnings: [],
        command: 'cmd',
        args: ['--wait', '--', 'x'],
      },
    });
    // Short options cluster and take their value attached, as getopt's do.
    expect(parseCommandLine(['exec', '-vn', 'jobs', '-E75', '--', 'true'], {})).toMatchObject({ options: { verbose: true, wait: 0, conflictExitCode: 75 } });
    expect(parseCommandLine(['exec', 'jobs', '--nonblock', '--conflict-exit-code=0', '--', 'true'], {})).toMatchObject({ options: { wait: 0, conflictExitCode: 0 } });
    expect(parseCommandLine(['exec', 'jobs', '--prefix=-odd-', '--', 'true'], {})).toMatchObject({ options: { prefix: '-odd-' } });
  });

  it('defaults: wait forever, busy 75, lease 30 s, grace 5 s, REDIS_URL else 127.0.0.1:6379, no password', () => {
    const a = parseCommandLine(['exec', 'n', '--', 'true'], { REDIS_URL: 'redis://h:7000' });
    expect(a).toMatchObject({
      kind: 'exec',
      options: { urls: ['redis://h:7000'], wait: undefined, conflictExitCode: 75, lease: 30_000, grace: 5_000, prefix: undefined, password: undefined, connectTimeout: 5_000 },
    });
    const b = parseCommandLine(['exec', 'n', '--', 'true'], {});
    expect(b).toMatchObject({ options: { urls: ['redis://127.0.0.1:6379'] } });
  });

  it('parses status, ls and release, with the connection options of exec', () => {
    expect(parseCommandLine(['status', 'jobs', '--json', '--redis', 'redis://a:1', '--redis', 'redis://b:2', '--redis', 'redis://c:3'], {})).toMatchObject({
      kind: 'status',
      options: { name: 'jobs', json: true, urls: ['redis://a:1', 'redis://b:2', 'redis://c:3'] },
    });
    expect(parseCommandLine(['status', 'jobs'], {})).toMatchObject({ kind: 'status', options: { json: false } });
    expect(parseCommandLine(['ls'], {})).toMatchObject({ kind: 'ls', options: { pattern: '*', json: false } });
    expect(parseCommandLine(['ls', 'order:*', '--json', '--prefix', 'app:'], {})).toMatchObject({ kind: 'ls', options: { pattern: 'order:*', json: true, prefix: 'app:' } });
    expect(parseCommandLine(['release', '--force', 'jobs'], {})).toMatchObject({ kind: 'release', options: { name: 'jobs', force: true } });
    expect(parseCommandLine(['release', 'jobs'], {})).toMatchObject({ kind: 'release', options: { name: 'jobs', force: false } });
    expect(parseCommandLine(['status', 'jobs', '-h'], {})).toMatchObject({ kind: 'help', text: expect.stringContaining('Usage: holdfast status') });
    expect(parseCommandLine(['help', 'ls'], {})).toMatchObject({ kind: 'help', text: expect.stringContaining('Usage: holdfast ls') });
  });

  it('a password in a --redis URL works, with a warning that ps shows it', () => {
    const parsed = parseCommandLine(['status', 'n', '--redis', 'redis://:pw@h:1'], {});
    expect(parsed).toMatchObject({ options: { warnings: [expect.stringMatching(/visible .*ps.*REDISCLI_AUTH/)] } });
    expect(parseCommandLine(['status', 'n'], { REDIS_URL: 'redis://:pw@h:1' })).toMatchObject({ options: { warnings: [] } });
  });

  it.each([
    [[], /missing command/],
    [['frob'], /unknown command 'frob'/],
    [['exec'], /missing lock name/],
    [['exec', 'n'], /missing -- and the command/],
    [['exec', 'n', '--'], /missing the command after --/],
    [['exec', 'n', 'ls', '-l'], /unexpected argument 'ls'.*put the command after --/],
    // A value that starts with '-' is an error whether or not this Node's parseArgs takes it as the value.
    [['exec', 'n', '--wait', '-1', '--', 'true'], /^--wait needs a value \(a value that starts with '-' goes after '=': --wait=-1\)$/],
    [['exec', 'n', '-w', '--', 'true'], /^-w needs a value$/],
    [['exec', 'n', '--grace', '--', 'true'], /^--grace needs a value$/],
    [['exec', 'n', '--wait=-1', '--', 'true'], /^--wait takes a duration: seconds .*got '-1'$/],
    [['exec', 'n', '--wait', 'soon', '--', 'true'], /^--wait takes a duration: seconds \(5, 0\.5\) or a number with a unit ms, s, m, h .*got 'soon'$/],
    [['exec', 'n', '--wait', '30s1m', '--', 'true'], /units must go from largest to smallest/],
    [['exec', 'n', '--wait', '1e3', '--', 'true'], /--wait takes a duration/],
    [['exec', 'n', '--lease', '50ms', '--', 'true'], /^--lease must be at least 100 ms, got '50ms'$/],
    [['exec', 'n', '--lease', '25d', '--', 'true'], /--lease takes a duration/],
    [['exec', 'n', '--lease', '600h', '--', 'true'], /--lease is too long/],
    [['exec', 'n', '-n', '-w', '5', '--', 'true'], /-n\/--nonblock and -w\/--wait exclude each other/],
    [['exec', 'n', '-E', '256', '--', 'true'], /-E\/--conflict-exit-code takes an exit status from 0 to 255, got '256'/],
    [['exec', 'n', '-E', 'busy', '--', 'true'], /-E\/--conflict-exit-code takes an exit status/],
    [['exec', 'n', '-w', '1', '-w', '2', '--', 'true'], /--wait is given twice/],
    [['exec', 'n', '--nonblock=yes', '--', 'true'], /--nonblock takes no value/],
    [['exec', 'n', '--redis', 'http://x', '--', 'true'], /redis:\/\/ or rediss:\/\//],
    [['exec', 'n', '--redis', 'redis://a:1', '--redis', 'redis://a:1', '--', 'true'], /twice/],
    [['exec', 'n', '--prefix', 'a{b', '--', 'true'], /must not contain \{/],
    [['exec', 'n', '--bogus', '--', 'true'], /^unknown option '--bogus'$/],
    [['exec', 'n', '--limit', '0', '--', 'true'], /^--limit takes a whole number of commands, at least 1, got '0'$/],
    [['exec', 'n', '--limit', '2.5', '--', 'true'], /^--limit takes a whole number/],
    [['exec', 'n', '--limit', 'two', '--', 'true'], /^--limit takes a whole number/],
    [['exec', 'n', '-x', '--', 'true'], /^unknown option '-x'$/],
    [['status'], /missing lock name: holdfast status <name>/],
    [['status', 'a', 'b'], /unexpected argument 'b'/],
    [['status', 'a', '--force'], /unknown option '--force'/],
    [['ls', 'a*', 'b*'], /takes one pattern/],
    [['ls', ''], /pattern must not be empty/],
    [['release', '--force'], /missing lock name: holdfast release <name>/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCommandLine(argv, {})).toThrow(UsageError);
    expect(() => parseCommandLine(argv, {})).toThrow(message);
  });

  it('reads durations: a bare number is seconds, units ms s m h, compounds largest first', () => {
    expect(parseDuration('--wait', '0', 0)).toBe(0);
    expect(parseDuration('--wait', '5', 0)).toBe(5_000);
    expect(parseDuration('--wait', '0.25', 0)).toBe(250);
    expect(parseDuration('--wait', '1.5s', 0)).toBe(1_500);
    expect(parseDuration('--wait', '2m', 0)).toBe(120_000);
    expect(parseDuration('--wait', '250ms', 0)).toBe(250);
    expect(parseDuration('--wait', '1h', 0)).toBe(3_600_000);
    expect(parseDuration('--wait', '1m30s', 0)).toBe(90_000);
    expect(parseDuration('--wait', '1h2m3s4ms', 0)).toBe(3_723_004);
    expect(parseDuration('--wait', '2s500ms', 0)).toBe(2_500);
    for (const bad of ['', ' 5', '5 s', '-5', '1e3', '5sec', '1m1m', '5ms1s', 's', '.5', '5.']) {
      expect(() => parseDuration('--wait', bad, 0)).toThrow(UsageError);
    }
  });

  it('ls builds its SCAN pattern with the prefix taken literally, and reads names out of lock keys only', () => {
    expect(escapeGlob('a*b?[c]\\')).toBe('a\\*b\\?\\[c\\]\\\\');
    expect(lockNameOf('holdfast:{jobs}', 'holdfast:')).toBe('jobs');
    expect(lockNameOf('holdfast:{a{b}}', 'holdfast:')).toBe('a{b}');
    expect(lockNameOf('holdfast:{jobs}:fence', 'holdfast:')).toBeUndefined();
    expect(lockNameOf('holdfast:{jobs}:queue', 'holdfast:')).toBeUndefined();
    expect(lockNameOf('other:{jobs}', 'holdfast:')).toBeUndefined();
    expect(lockNameOf('holdfast:{}', 'holdfast:')).toBeUndefined();
  });

  it('--help and each command\'s --help exit 0 and explain the options, signals and exit statuses', async () => {
    const main = holdfast(['--help']);
    const exec = holdfast(['exec', 'whatever', '--help']);
    const others = ['status', 'ls', 'release'].map((c) => holdfast(['help', c]));
    expect((await main.result()).code).toBe(0);
    for (const usage of ['holdfast exec <name> [options] -- <command>', 'holdfast status <name>', 'holdfast ls [<pattern>]', 'holdfast release <name> [--force]']) {
      expect(main.stdout).toContain(usage);
    }
    expect((await exec.result()).code).toBe(0);
    for (const word of ['--redis', '-w, --wait', '-n, --nonblock', '-E, --conflict-exit-code', '--lease', '--grace', '--prefix', 'REDISCLI_AUTH', 'watchdog', 'SIGTERM', 'SIGKILL', 'SIGUSR1', 'process group', 'HOLDFAST_TOKEN', '1m30s']) {
      expect(exec.stdout).toContain(word);
    }
    for (const status of [EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_LOCK_LOST, EXIT_INTERNAL, EXIT_LOCK_BUSY]) expect(exec.stdout).toContain(`  ${status}  `);
    for (const [i, c] of ['status', 'ls', 'release'].entries()) {
      expect((await others[i].result()).code).toBe(0);
      expect(others[i].stdout).toContain(`Usage: holdfast ${c}`);
      expect(others[i].stdout).toContain('REDISCLI_AUTH');
    }
    expect(others[1].stdout).toMatch(/SCAN \(never KEYS/);
  });

  it('bad usage exits 64 with a message on stderr, before touching Redis', async () => {
    const cli = holdfast(['exec', 'n', 'echo', 'hi']);
    const exit = await cli.result();
    expect(exit.code).toBe(EXIT_USAGE);
    expect(cli.stderr).toMatch(/holdfast: unexpected argument 'echo'/);
    expect(cli.stderr).toMatch(/Try 'holdfast exec --help'/);
    expect(cli.stdout).toBe('');
  });
});

describe('exec', () => {
  it('passes the exit status through, 128+N for a command killed by signal N, 127 for a missing one', async () => {
    const three = holdfast(['exec', name(), '--', 'sh', '-c', 'exit 3']);
    const killed = holdfast(['exec', name(), '--', 'sh', '-c', 'kill -9 $$']);
    const missing = holdfast(['exec', name(), '--', 'holdfast-no-such-command']);
    const ok = holdfast(['exec', name(), '--', 'true']);
    expect((await three.result()).code).toBe(3);
    expect((await killed.result()).code).toBe(128 + 9);
    expect((await missing.result()).code).toBe(EXIT_NOT_FOUND);
    expect(missing.stderr).toMatch(/cannot run 'holdfast-no-such-command'/);
    expect((await ok.result()).code).toBe(0);
  });

  it('holds the lock while the command runs, passes HOLDFAST_LOCK/TOKEN, and deletes the key after', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.out`);
    const cli = holdfast(['exec', lockName, '--prefix', 'clitest:', '--', ...command(file)]);
    const ready = await cli.output(/ready \S+ \d+/);
    // The token follows the server's clock (see "Keys and retention" in the README).
    const token = /^ready (\S+) (\d+)$/.exec(ready);
    expect(token?.[1]).toBe(lockName);
    expect(Number.isSafeInteger(Number(token?.[2]))).toBe(true);
    expect(await redis.exists(key(lockName, 'clitest:'))).toBe(1);
    expect(await redis.pttl(key(lockName, 'clitest:'))).toBeGreaterThan(20_000); // the default 30 s lease
    cli.child.stdin!.write('done\n');
    expect((await cli.result()).code).toBe(0);
    expect(await redis.exists(key(lockName, 'clitest:'))).toBe(0);
    expect(await redis.get(`${key(lockName, 'clitest:')}:fence`)).toBe(token?.[2]);
  });

  it('two concurrent execs never overlap; the later one waits for the earlier', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.log`);
    // Each command appends "start X" and "end X" 300 ms apart. The spec holds the lock
    // until all three wait for it, so they contend however slowly each process starts
    // (under load they once started too far apart to meet); without the lock they would
    // interleave.
    const body = 'echo "start $1" >> "$2"; sleep 0.3; echo "end $1" >> "$2"';
    const gate = client().getLock(lockName);
    await gate.lock();
    const clis = ['a', 'b', 'c'].map((id) => holdfast(['exec', lockName, '-v', '--', 'sh', '-c', body, 'sh', id, file]));
    await waitFor(async () => (await redis.pubsub('NUMSUB', `${key(lockName)}:next`))[1] === 3, { timeout: 10_000, interval: 10, message: 'three execs waiting' });
    await gate.unlock();
    const exits = await Promise.all(clis.map((c) => c.result()));
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);
    const lines = read(file).trim().split('\n');
    expect(lines).toHaveLength(6);
    for (let i = 0; i < 6; i += 2) {
      const id = lines[i].replace('start ', '');
      expect([lines[i], lines[i + 1]]).toEqual([`start ${id}`, `end ${id}`]);
    }
    expect(new Set(lines.filter((l) => l.startsWith('start'))).size).toBe(3);
    // Two of them waited for at least one whole command after the gate opened.
    const waited = clis.map((c) => Number(/acquired '.*' \(token \d+\) after (\d+) ms/.exec(c.stderr)?.[1] ?? -1));
    expect(Math.max(...waited)).toBeGreaterThanOrEqual(250);
    expect(await redis.exists(key(lockName))).toBe(0);
  });

  it('--wait 0 while another client holds the lock: exits 75 without running the command; --wait 300ms waits that long', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.ran`);
    const other = client();
    await other.getLock(lockName).lock();
    const cli = holdfast(['exec', lockName, '--wait', '0', '--', 'touch', file]);
    const exit = await cli.result();
    expect(exit.code).toBe(EXIT_LOCK_BUSY);
    // It says who holds it: host and pid from the owner id.
    expect(cli.stderr).toMatch(new RegExp(`lock '${lockName}' is held by \\S+ pid ${process.pid};`));
    expect(fs.existsSync(file)).toBe(false);
    // Still the other client's.
    expect(await redis.hlen(key(lockName))).toBe(1);
    const bounded = holdfast(['exec', lockName, '--wait', '300ms', '--', 'touch', file]);
    const exit2 = await bounded.result();
    expect(exit2.code).toBe(EXIT_LOCK_BUSY);
    expect(exit2.ms).toBeGreaterThanOrEqual(300);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('without --wait, waits for the holder and runs the command once it releases', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.ran`);
    const other = client();
    const lock = other.getLock(lockName);
    await lock.lock();
    const cli = holdfast(['exec', lockName, '-v', '--', 'touch', file]);
    await cli.output(/waiting for/);
    expect(fs.existsSync(file)).toBe(false);
    await lock.unlock();
    expect((await cli.result()).code).toBe(0);
    expect(fs.existsSync(file)).toBe(true);
    expect(await redis.exists(key(lockName))).toBe(0);
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('forwards %s to the command and releases the lock when it ends', async (sig) => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    const cli = holdfast(['exec', lockName, '--', ...command(file)]);
    await cli.output(/ready/);
    expect(await redis.exists(key(lockName))).toBe(1);
    cli.child.kill(sig);
    const exit = await cli.result();
    expect(read(file)).toBe(`${sig}\n`);
    expect(exit.code).toBe(42); // the command's status
    expect(await redis.exists(key(lockName))).toBe(0);
  });

  it('a signal while waiting for the lock stops the wait: 128+N, command not run, nothing left in Redis', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.ran`);
    const other = client();
    await other.getLock(lockName).lock();
    const cli = holdfast(['exec', lockName, '-v', '--', 'touch', file]);
    await cli.output(/waiting for/);
    cli.child.kill('SIGINT');
    const exit = await cli.result();
    expect(exit.code).toBe(128 + os.constants.signals.SIGINT);
    expect(cli.stderr).toMatch(/SIGINT while waiting for/);
    expect(fs.existsSync(file)).toBe(false);
    expect(await redis.hlen(key(lockName))).toBe(1);
  });

  it('renews a short lease for a command that runs longer than it', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.out`);
    const cli = holdfast(['exec', lockName, '--lease', '300ms', '-v', '--', ...command(file)]);
    await cli.output(/ready/);
    // Three renewals = 300 ms of lease used up three times over, still held.
    await waitFor(() => (cli.stderr.match(/renewed/g) ?? []).length >= 3, { timeout: 5_000, message: 'three renewals' });
    expect(await redis.exists(key(lockName))).toBe(1);
    cli.child.stdin!.write('done\n');
    expect((await cli.result()).code).toBe(0);
    expect(await redis.exists(key(lockName))).toBe(0);
  });

  it('a lost lock: the command gets SIGTERM, holdfast exits 70 naming the lock and the reason', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    const cli = holdfast(['exec', lockName, '--lease', '600ms', '--', ...command(file)]);
    await cli.output(/ready/);
    const t0 = performance.now();
    expect(await client().getLock(lockName).forceUnlock()).toBe(true);
    const exit = await cli.result();
    // Renewals every 200 ms notice the deleted key; the command ends on SIGTERM at once.
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(exit.code).toBe(EXIT_LOCK_LOST);
    expect(read(file)).toBe('SIGTERM\n');
    expect(cli.stderr).toMatch(new RegExp(`lock '${lockName}' was lost: its key was deleted \\(reason: deleted\\)`));
    expect(cli.stderr).toMatch(/SIGTERM now, SIGKILL in 5000 ms/);
    expect(cli.stderr).toMatch(new RegExp(`exiting 70: lock '${lockName}' was lost \\(deleted\\)`));
  });

  it('a lost lock and a command that ignores SIGTERM: SIGKILL after --grace', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    const cli = holdfast(['exec', lockName, '--lease', '600ms', '--grace', '300ms', '--', ...command(file, { ignoreTerm: true })]);
    await cli.output(/ready/);
    await redis.del(key(lockName));
    await waitFor(() => read(file) === 'SIGTERM\n', { timeout: 3_000, message: 'the command noting SIGTERM' });
    const termAt = performance.now();
    const exit = await cli.result();
    expect(performance.now() - termAt).toBeGreaterThanOrEqual(250);
    expect(exit.code).toBe(EXIT_LOCK_LOST);
    expect(cli.stderr).toMatch(/did not end within 300 ms of SIGTERM: SIGKILL/);
  });

  it('a lost lock through an unreachable Redis (stalled connection): exits 70 with reason expired', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
    try {
      const lockName = name();
      const file = path.join(tmp, `${lockName}.sig`);
      const cli = holdfast(['exec', lockName, '--redis', `redis://127.0.0.1:${proxy.port}`, '--lease', '600ms', '--', ...command(file)]);
      await cli.output(/ready/);
      proxy.blackhole();
      const exit = await cli.result();
      expect(exit.code).toBe(EXIT_LOCK_LOST);
      expect(read(file)).toBe('SIGTERM\n');
      expect(cli.stderr).toMatch(/renewing '.*' failed|was lost/);
      expect(cli.stderr).toMatch(new RegExp(`lock '${lockName}' was lost: its lease ended before a renewal succeeded \\(reason: expired\\)`));
    } finally {
      await proxy.close();
    }
  });
});

describe('exec: waiting like flock', () => {
  it('a bare duration is seconds: -w 5 waits for a holder that releases within it', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.ran`);
    const lock = client().getLock(lockName);
    await lock.lock();
    const cli = holdfast(['exec', lockName, '-w', '5', '--', 'touch', file]);
    // Subscribed to the lock's channel: holdfast is waiting (with -w 5 read as 5 ms it
    // would have given up long before).
    await waitFor(async () => (await numsub(lockName)) === 1, { timeout: 10_000, interval: 10, message: 'holdfast waiting' });
    await lock.unlock();
    expect((await cli.result()).code).toBe(0);
    expect(fs.existsSync(file)).toBe(true);
  });

  it('a fraction of a second, and units: -w 0.3 and --wait 0m0.3s wait 300 ms, then exit 75', async () => {
    const lockName = name();
    await client().getLock(lockName).lock();
    const clis = [holdfast(['exec', lockName, '-w', '0.3', '--', 'true']), holdfast(['exec', lockName, '--wait', '0m0.3s', '--', 'true'])];
    for (const cli of clis) {
      expect((await cli.result()).code).toBe(EXIT_LOCK_BUSY);
      expect(cli.stderr).toMatch(new RegExp(`lock '${lockName}' is held by \\S+ pid ${process.pid}; not taken within 300 ms`));
    }
  });

  it('-n makes one attempt: busy exits 75, or the -E status; the command runs only when the lock is free', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.ran`);
    const lock = client().getLock(lockName);
    await lock.lock();
    const plain = holdfast(['exec', lockName, '-n', '--', 'touch', file]);
    const e3 = holdfast(['exec', lockName, '-n', '-E', '3', '--', 'touch', file]);
    const e0 = holdfast(['exec', lockName, '--wait', '200ms', '--conflict-exit-code', '0', '--', 'touch', file]);
    expect((await plain.result()).code).toBe(EXIT_LOCK_BUSY);
    expect(plain.stderr).toMatch(/not taken at once \(-n: one attempt\)/);
    expect((await e3.result()).code).toBe(3);
    expect((await e0.result()).code).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
    await lock.unlock();
    // -E is the status of a busy lock only: the command's own status goes through.
    const free = holdfast(['exec', lockName, '-n', '-E', '3', '--', 'sh', '-c', 'exit 5']);
    expect((await free.result()).code).toBe(5);
  });
});

describe('exec --limit: at most N commands at once (a semaphore)', () => {
  const semKey = (semName: string) => `${key(semName)}:sem`;

  it('lets at most two of five concurrent commands run at once, with HOLDFAST_PERMIT and no token; nothing is left after', async () => {
    const semName = name();
    const file = path.join(tmp, `${semName}.log`);
    // Each command logs its start and end 300 ms apart, with its permit and token (none).
    const body = 'echo "start $1 $HOLDFAST_LIMIT ${HOLDFAST_PERMIT:+permit} ${HOLDFAST_TOKEN:-no-token}" >> "$2"; sleep 0.3; echo "end $1" >> "$2"';
    // The spec holds both permits until all five wait, so they contend however slowly each starts.
    const gate = await client().getSemaphore(semName, 2).acquire({ permits: 2 });
    const clis = ['a', 'b', 'c', 'd', 'e'].map((id) => holdfast(['exec', semName, '--limit', '2', '-v', '--', 'sh', '-c', body, 'sh', id, file]));
    await waitFor(async () => (await redis.llen(`${semKey(semName)}:queue`)) === 5, { timeout: 10_000, interval: 10, message: 'five execs waiting' });
    await gate.release();
    const exits = await Promise.all(clis.map((c) => c.result()));
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0, 0, 0]);
    const lines = read(file).trim().split('\n');
    expect(lines).toHaveLength(10);
    let running = 0;
    let most = 0;
    for (const line of lines) {
      running += line.startsWith('start') ? 1 : -1;
      most = Math.max(most, running);
    }
    expect(most).toBe(2);
    for (const line of lines.filter((l) => l.startsWith('start'))) expect(line).toMatch(/^start [a-e] 2 permit no-token$/);
    expect(clis[0].stderr).toMatch(/acquired '.*' \(permit \S+ of 2\)/);
    expect(await redis.keys(`${key(semName)}*`)).toEqual([]);
  });

  it('-n while every permit is in use: exits 75 (or -E) without running the command, saying all permits are in use', async () => {
    const semName = name();
    const file = path.join(tmp, `${semName}.ran`);
    const held = await client().getSemaphore(semName, 2).acquire({ permits: 2 });
    const busy = holdfast(['exec', semName, '--limit', '2', '-n', '--', 'touch', file]);
    const e3 = holdfast(['exec', semName, '--limit', '2', '-w', '200ms', '-E', '3', '--', 'touch', file]);
    expect((await busy.result()).code).toBe(EXIT_LOCK_BUSY);
    expect(busy.stderr).toMatch(/semaphore '.*' is all 2 permits in use; not taken at once/);
    expect((await e3.result()).code).toBe(3);
    expect(fs.existsSync(file)).toBe(false);
    await held.release();
    const free = holdfast(['exec', semName, '--limit', '2', '-n', '--', 'sh', '-c', 'exit 5']);
    expect((await free.result()).code).toBe(5);
  });

  it('a lost permit: the command gets SIGTERM and holdfast exits 70 naming the semaphore', async () => {
    const semName = name();
    const file = path.join(tmp, `${semName}.sig`);
    const cli = holdfast(['exec', semName, '--limit', '3', '--lease', '300ms', '--', ...command(file)]);
    await cli.output(/ready /);
    await redis.del(semKey(semName)); // every permit gone, as a forced release would do
    const exit = await cli.result();
    expect(exit.code).toBe(EXIT_LOCK_LOST);
    expect(cli.stderr).toMatch(/semaphore '.*' was lost/);
    expect(read(file)).toContain('SIGTERM');
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('forwards %s to the command and releases the permit when it ends', async (sig) => {
    const semName = name();
    const file = path.join(tmp, `${semName}.sig`);
    const cli = holdfast(['exec', semName, '--limit', '2', '--', ...command(file)]);
    await cli.output(/ready /);
    expect(await redis.exists(semKey(semName))).toBe(1);
    cli.child.kill(sig);
    expect((await cli.result()).code).toBe(42);
    expect(read(file)).toContain(sig);
    expect(await redis.keys(`${key(semName)}*`)).toEqual([]);
  });
});

describe('exec: signals', () => {
  it('a Ctrl-C at a terminal (SIGINT to holdfast\'s process group) reaches the command once', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    // A shell, not node: a single-threaded process whose traps run in signal-number
    // order, so that a SIGINT pending beside a SIGUSR2 marker is noted first. (Node may
    // take two signals on two threads and run their listeners in either order.) The
    // background sleep ignores SIGINT, as asynchronous commands of a shell do.
    const script = `
      trap 'echo SIGINT >> "$1"' INT
      trap 'echo SIGUSR2 >> "$1"' USR2
      trap 'echo SIGTERM >> "$1"; kill $s 2>/dev/null; exit 42' TERM
      sleep 600 & s=$!
      echo "ready sh pid $$"
      while :; do wait $s; done`;
    const cli = holdfast(['exec', lockName, '-v', '--', 'sh', '-c', script, 'sh', file], {}, { detached: true });
    const pid = await commandPid(cli);
    const notes = (what: string) => read(file).split('\n').filter((l) => l === what).length;
    const marker = async (n: number) => {
      process.kill(pid, 'SIGUSR2');
      await waitFor(() => notes('SIGUSR2') === n, { timeout: 5_000, interval: 5, message: `the command noting marker ${n} (${JSON.stringify(read(file))})` });
    };
    // holdfast is held still while the terminal's SIGINT reaches the group, so that a
    // command sharing its group (as it did) takes that copy before holdfast passes on its
    // own; were both pending at once they would be delivered as one.
    process.kill(cli.child.pid!, 'SIGSTOP');
    cli.signalGroup('SIGINT');
    await marker(1);
    process.kill(cli.child.pid!, 'SIGCONT');
    await cli.output(/forwarding SIGINT to the command/);
    await marker(2); // after holdfast's copy: any SIGINT the command got is noted by now
    expect(notes('SIGINT')).toBe(1);
    cli.child.kill('SIGTERM');
    const exit = await cli.result();
    expect(exit.code).toBe(42);
    expect(notes('SIGINT')).toBe(1);
    expect(await redis.exists(key(lockName))).toBe(0);
  });

  it('SIGUSR2, SIGUSR1, SIGQUIT and SIGWINCH reach the command; holdfast neither dies nor opens a debugger', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    const signals = ['SIGUSR2', 'SIGUSR1', 'SIGQUIT', 'SIGWINCH'] as const;
    const cli = holdfast(['exec', lockName, '--', ...command(file, { record: [...signals], exitOn: [] })]);
    await cli.output(/ready/);
    let expected = '';
    for (const sig of signals) {
      cli.child.kill(sig);
      expected += `${sig}\n`;
      await waitFor(() => read(file) === expected, { timeout: 5_000, message: `the command noting ${sig} (file: ${JSON.stringify(read(file))})` });
    }
    expect(cli.child.exitCode).toBeNull();
    expect(await redis.exists(key(lockName))).toBe(1);
    cli.child.stdin!.write('done\n');
    const exit = await cli.result();
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(cli.stderr).not.toMatch(/Debugger listening/);
    expect(await redis.exists(key(lockName))).toBe(0);
  });

  (linux ? it : it.skip)('Ctrl-Z (SIGTSTP to the group) stops the command and holdfast; SIGCONT resumes both', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    const cli = holdfast(['exec', lockName, '--', ...command(file)], {}, { detached: true });
    const pid = await commandPid(cli);
    const holdfastPid = cli.child.pid!;
    cli.signalGroup('SIGTSTP');
    await waitFor(() => procState(pid) === 'T' && procState(holdfastPid) === 'T', {
      timeout: 5_000,
      interval: 10,
      message: `both stopped (command ${procState(pid)}, holdfast ${procState(holdfastPid)})`,
    });
    cli.signalGroup('SIGCONT'); // what a shell's fg sends
    await waitFor(() => !['T', ''].includes(procState(pid)) && !['T', ''].includes(procState(holdfastPid)), {
      timeout: 5_000,
      interval: 10,
      message: 'both running again',
    });
    cli.child.stdin!.write('done\n');
    expect((await cli.result()).code).toBe(0);
    expect(read(file)).toBe('');
  });

  it('on a lost lock the whole process group of the command is stopped, not only its first process', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.pid`);
    // sh starts a background sleep, notes its pid, and waits: SIGTERM to sh alone would leave the sleep.
    const cli = holdfast(['exec', lockName, '--lease', '600ms', '--', 'sh', '-c', `sleep 600 & echo $! > '${file}'; echo ready; wait`]);
    await cli.output(/ready/);
    const sleeper = Number(read(file).trim());
    expect(sleeper).toBeGreaterThan(0);
    await redis.del(key(lockName));
    expect((await cli.result()).code).toBe(EXIT_LOCK_LOST);
    await waitFor(
      () => {
        try {
          process.kill(sleeper, 0);
          return false;
        } catch {
          return true;
        }
      },
      { timeout: 5_000, message: `the background sleep (pid ${sleeper}) ended` },
    );
  });
});

describe('exec: failures of holdfast itself', () => {
  it('an internal error stops the command (SIGTERM), waits for it, and exits 71, not 70 like a lost lock', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    // Loaded into holdfast's process only: the next SIGWINCH makes it throw from a
    // listener, an exception holdfast does not expect.
    const fixture = path.join(tmp, 'throw-on-winch.js');
    fs.writeFileSync(fixture, `process.on('SIGWINCH', () => { throw new Error('injected by cli.spec'); });\n`);
    const cli = holdfast(['exec', lockName, '--', ...command(file)], {}, { nodeArgs: ['-r', fixture] });
    await cli.output(/ready/);
    cli.child.kill('SIGWINCH');
    const exit = await cli.result();
    expect(exit.code).toBe(EXIT_INTERNAL);
    expect(read(file)).toBe('SIGTERM\n'); // the command was stopped before holdfast exited
    expect(cli.stderr).toMatch(/internal error \(please report it at https:\/\/github\.com\/holdfast-js\/holdfast\/issues\): Error: injected by cli.spec/);
    expect(cli.stderr).toMatch(/stopping the command \(pid \d+\): SIGTERM now/);
  });
});

describe('a Redis with a password', () => {
  let secured: RedisServer;
  let url: string;

  beforeAll(async () => {
    // startServer({ args: ['--requirepass', ...] }) cannot tell when such a server is
    // ready (its PING is refused with NOAUTH): the password is set once it runs.
    secured = await startServer();
    const admin = new Redis(secured.port, '127.0.0.1');
    await admin.config('SET', 'requirepass', 'cli-s3cret');
    admin.disconnect();
    url = `redis://127.0.0.1:${secured.port}`;
  });

  afterAll(async () => {
    await secured?.stop();
  });

  it('exec, status, ls and release read it from REDISCLI_AUTH, as redis-cli does', async () => {
    const lockName = name();
    const env = { REDISCLI_AUTH: 'cli-s3cret' };
    const file = path.join(tmp, `${lockName}.out`);
    const cli = holdfast(['exec', lockName, '--redis', url, '--', ...command(file)], env);
    await cli.output(/ready/);
    expect(cli.child.spawnargs.join(' ')).not.toContain('cli-s3cret');
    const status = holdfast(['status', lockName, '--redis', url, '--json'], env);
    expect((await status.result()).code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ name: lockName, locked: true });
    const ls = holdfast(['ls', '--redis', url], env);
    expect((await ls.result()).code).toBe(0);
    expect(ls.stdout).toContain(lockName);
    cli.child.stdin!.write('done\n');
    expect((await cli.result()).code).toBe(0);
    const release = holdfast(['release', lockName, '--force', '--redis', url], env);
    expect((await release.result()).code).toBe(0);
    expect(release.stdout).toMatch(/was not locked/);
    expect(cli.stderr).toBe('');
  });

  it('without it: exit 69 naming the refusal; in the URL: works, with a warning that ps shows it', async () => {
    const refused = holdfast(['exec', name(), '--redis', url, '--', 'true']);
    expect((await refused.result()).code).toBe(EXIT_UNAVAILABLE);
    expect(refused.stderr).toMatch(/cannot connect to redis:\/\/127\.0\.0\.1:\d+: .*(NOAUTH|Authentication required)/);
    const inUrl = holdfast(['exec', name(), '--redis', `redis://:cli-s3cret@127.0.0.1:${secured.port}`, '--', 'true']);
    expect((await inUrl.result()).code).toBe(0);
    expect(inUrl.stderr).toMatch(/warning: a password in a --redis URL is visible .*\(ps\); put it in REDISCLI_AUTH/);
  });
});

describe('status, ls, release', () => {
  const comparable = (info: LockInfo) => ({ ...info, ttl: info.ttl > 0 ? 'positive' : info.ttl });

  it('status --json prints lock.inspect() of a held lock; without --json, who holds it in words', async () => {
    const lockName = name();
    const lock = client().getLock(lockName);
    await lock.lock();
    const json = holdfast(['status', lockName, '--json']);
    const text = holdfast(['status', lockName]);
    expect((await json.result()).code).toBe(0);
    const info = JSON.parse(json.stdout) as LockInfo;
    expect(comparable(info)).toEqual(comparable(await lock.inspect()));
    expect(info).toMatchObject({ name: lockName, locked: true, holders: [{ host: os.hostname(), pid: process.pid, count: 1 }] });
    expect(info.ttl).toBeLessThanOrEqual(30_000);
    expect(json.stdout.trim().split('\n')).toHaveLength(1);
    expect((await text.result()).code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^name: +${lockName}$`, 'm'));
    expect(text.stdout).toMatch(/^state: +held, TTL \d+(\.\d)? s$/m);
    expect(text.stdout).toContain(`${os.hostname()} pid ${process.pid}   owner ${info.holders[0].owner}`);
    expect(text.stdout).toMatch(new RegExp(`^token: +${info.token} \\(the last one minted\\)$`, 'm'));
  });

  it('status of a free lock: locked false, no holders', async () => {
    const lockName = name();
    const lock = client().getLock(lockName);
    await lock.lock();
    await lock.unlock();
    const json = holdfast(['status', lockName, '--json']);
    const text = holdfast(['status', lockName]);
    expect((await json.result()).code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await lock.inspect());
    expect(JSON.parse(json.stdout)).toMatchObject({ locked: false, ttl: -2, holders: [] });
    expect((await text.result()).code).toBe(0);
    expect(text.stdout).toMatch(/^state: +free$/m);
  });

  it('status exits 69 when Redis is unreachable', async () => {
    const cli = holdfast(['status', 'x', '--redis', `redis://127.0.0.1:${await freePort()}`]);
    expect((await cli.result()).code).toBe(EXIT_UNAVAILABLE);
    expect(cli.stderr).toMatch(/ECONNREFUSED/);
  });

  it('ls lists the held locks with SCAN (never KEYS), by pattern, leaving out free locks and suffixed keys', async () => {
    const prefix = `ls${process.pid}:`;
    const locks = client(redis, { keyPrefix: prefix });
    for (const n of ['a-1', 'a-2', 'b-1']) await locks.getLock(n).lock();
    const free = locks.getLock('a-3');
    await free.lock();
    await free.unlock();
    await redis.set(`${prefix}{a-4}:fence`, '9');
    await redis.hset(`${prefix}{a-5}:queue`, 'x', '1');
    await redis.config('RESETSTAT');
    const all = holdfast(['ls', '--prefix', prefix]);
    const some = holdfast(['ls', 'a-*', '--json', '--prefix', prefix]);
    expect((await all.result()).code).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME +KIND +TTL +TOKEN +HOLDERS$/);
    expect(lines.slice(1).map((l) => l.split(/ +/).slice(0, 2).join(' '))).toEqual(['a-1 lock', 'a-2 lock', 'b-1 lock']);
    expect(lines[1]).toContain(`${os.hostname()} pid ${process.pid}`);
    expect((await some.result()).code).toBe(0);
    const infos = JSON.parse(some.stdout) as LockInfo[];
    expect(infos.map((i) => i.name)).toEqual(['a-1', 'a-2']);
    expect(infos.map(comparable)).toEqual(await Promise.all(['a-1', 'a-2'].map(async (n) => comparable(await locks.getLock(n).inspect()))));
    const stats = await redis.info('commandstats');
    expect(stats).toMatch(/cmdstat_scan:calls=\d+/);
    expect(stats).not.toMatch(/cmdstat_keys:/);
    const none = holdfast(['ls', 'zzz*', '--prefix', prefix]);
    const noneJson = holdfast(['ls', 'zzz*', '--json', '--prefix', prefix]);
    expect((await none.result()).code).toBe(0);
    expect(none.stdout).toBe('');
    expect((await noneJson.result()).code).toBe(0);
    expect(noneJson.stdout).toBe('[]\n');
  });

  it('status and ls show read-write locks and semaphores too: readers, permits, limit, waiters', async () => {
    const prefix = `kinds${process.pid}:`;
    const locks = client(redis, { keyPrefix: prefix });
    const other = client(redis, { keyPrefix: prefix });
    await locks.getReadWriteLock('doc').readLock().lock();
    await other.getReadWriteLock('doc').readLock().lock();
    await locks.getReadWriteLock('page').writeLock().lock();
    const permit = await locks.getSemaphore('jobs', 3).acquire({ permits: 2 });
    const waiter = other.getSemaphore('jobs', 3).acquire({ permits: 2, waitTime: 60_000 });
    await waitFor(async () => (await redis.llen(`${prefix}{jobs}:sem:queue`)) === 1, { timeout: 2_000, message: 'the semaphore waiter queued' });
    await locks.getLock('plain').lock();

    // All at once: each start of the bin costs seconds on a loaded machine.
    const json = holdfast(['status', 'jobs', '--json', '--prefix', prefix]);
    const text = holdfast(['status', 'jobs', '--prefix', prefix]);
    const doc = holdfast(['status', 'doc', '--json', '--prefix', prefix]);
    const page = holdfast(['status', 'page', '--json', '--prefix', prefix]);
    const all = holdfast(['ls', '--prefix', prefix]);
    const some = holdfast(['ls', 'jobs', '--json', '--prefix', prefix]);
    expect((await json.result()).code).toBe(0);
    const jobs = JSON.parse(json.stdout) as NameStatus;
    expect(jobs).toMatchObject({ name: 'jobs', locked: false, holders: [] });
    expect(jobs.semaphore).toMatchObject({ name: 'jobs', limit: 3, used: 2, waiters: 1, holders: [{ id: permit.id, host: os.hostname(), pid: process.pid, permits: 2 }] });
    expect(jobs.read).toBeUndefined();
    expect((await text.result()).code).toBe(0);
    expect(text.stdout).toMatch(/^semaphore: +2 of 3 permits held, 1 waiting$/m);
    expect(text.stdout).toContain(`${os.hostname()} pid ${process.pid} (2 permits), TTL `);
    expect(text.stdout).not.toMatch(/^state:/m);

    expect((await doc.result()).code).toBe(0);
    const docInfo = JSON.parse(doc.stdout) as NameStatus;
    expect(docInfo).toMatchObject({ locked: false, read: { name: 'doc', locked: true } });
    expect(docInfo.read!.holders).toHaveLength(2);
    expect(docInfo.semaphore).toBeUndefined();
    // The write hold lives in the lock hash: it shows as the lock.
    expect((await page.result()).code).toBe(0);
    expect(JSON.parse(page.stdout)).toMatchObject({ locked: true, holders: [{ pid: process.pid }] });

    expect((await all.result()).code).toBe(0);
    const rows = all.stdout.trim().split('\n').slice(1).map((l) => l.split(/ +/));
    expect(rows.map((r) => `${r[0]} ${r[1]}`)).toEqual(['doc read', 'jobs semaphore', 'page lock', 'plain lock']);
    expect(rows[1]![2]).toBe('2/3');
    expect((await some.result()).code).toBe(0);
    expect((JSON.parse(some.stdout) as NameStatus[]).map((i) => [i.name, (i.semaphore as SemaphoreInfo).used])).toEqual([['jobs', 2]]);

    await permit.release();
    await (await waiter).release();
  });

  it('ls reads holds out of their keys only, and checks the name against the pattern itself', () => {
    expect(heldKeyOf('p:{a}', 'p:')).toEqual({ name: 'a', kind: 'lock' });
    expect(heldKeyOf('p:{a}:read', 'p:')).toEqual({ name: 'a', kind: 'read' });
    expect(heldKeyOf('p:{a}:sem', 'p:')).toEqual({ name: 'a', kind: 'semaphore' });
    for (const other of ['p:{a}:readers', 'p:{a}:sem:expiry', 'p:{a}:fence', 'p:{}', 'q:{a}']) expect(heldKeyOf(other, 'p:')).toBeUndefined();
    expect(globRegExp('a-*').test('a-1')).toBe(true);
    expect(globRegExp('x').test('x}y')).toBe(false);
    expect(globRegExp('h?llo').test('hallo')).toBe(true);
    expect(globRegExp('h[ae]llo').test('hillo')).toBe(false);
    expect(globRegExp('h[^e]llo').test('hallo')).toBe(true);
    expect(globRegExp('h[a-c]llo').test('hbllo')).toBe(true);
    expect(globRegExp('a\\*').test('a*')).toBe(true);
    expect(globRegExp('a\\*').test('ab')).toBe(false);
    expect(globRegExp('a.b').test('axb')).toBe(false);
  });

  it('release asks and --force releases read holds and permits too; a writer hears the lock hash notice', async () => {
    const lockName = name();
    const readers = client(redis);
    const held = await readers.getReadWriteLock(lockName).readLock().acquire();
    const sem = client(redis).getSemaphore(lockName, 2);
    const permit = await sem.acquire();
    for (const owner of [(await readers.getReadWriteLock(lockName).readLock().inspect()).holders[0]!.owner, permit.id]) {
      const channel = `holdfast:holders:${owner.slice(0, owner.lastIndexOf(':') + 1)}`;
      await waitFor(async () => Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]) === 1, { timeout: 2_000, message: 'holder channel subscribed' });
    }
    const ask = holdfast(['release', lockName]);
    expect((await ask.result()).code).toBe(0);
    expect(ask.stdout).toBe(`asked 1 reader of '${lockName}' to let go\nasked 1 permit holder of semaphore '${lockName}' to let go\n`);
    await waitFor(() => held.signal.aborted && permit.signal.aborted, { timeout: 2_000, message: 'both asked' });
    const lost = nextEvent<{ reason: string }>(sem, 'lost', 2_000);
    const force = holdfast(['release', lockName, '--force']);
    expect((await force.result()).code).toBe(0);
    expect(force.stdout).toBe(
      `released the read holds of '${lockName}', held by ${os.hostname()} pid ${process.pid}\n` +
        `released the permits of semaphore '${lockName}', held by ${os.hostname()} pid ${process.pid} (1 permit)\n`,
    );
    expect((await lost).reason).toBe('deleted');
    expect(await redis.keys(`${key(lockName)}*`)).toEqual([]);

    // A writer keeps its hold in the lock hash: `release NAME` cannot tell it from a lock's, and reaches it.
    const writer = client(redis).getReadWriteLock(lockName).writeLock();
    const asked = nextEvent<{ kind: string }>(writer, 'revokeRequested', 2_000);
    await writer.lock();
    const again = holdfast(['release', lockName]);
    expect((await again.result()).code).toBe(0);
    expect(again.stdout).toBe(`asked 1 hold of '${lockName}' to let go\n`);
    expect((await asked).kind).toBe('write');
    const writerLost = nextEvent<{ reason: string; kind: string }>(writer, 'lost', 2_000);
    expect((await holdfast(['release', lockName, '--force']).result()).code).toBe(0);
    expect(await writerLost).toMatchObject({ reason: 'deleted', kind: 'write' });
  });

  it('ls walks every page of the SCAN: 2500 locks', async () => {
    const prefix = `lsmany${process.pid}:`;
    const pipeline = redis.pipeline();
    for (let i = 0; i < 2_500; i++) pipeline.hset(`${prefix}{job-${i}}`, `other-host:1:x:${i}`, '1').pexpire(`${prefix}{job-${i}}`, 60_000);
    await pipeline.exec();
    try {
      const cli = holdfast(['ls', '--json', '--prefix', prefix]);
      expect((await cli.result(30_000)).code).toBe(0);
      const infos = JSON.parse(cli.stdout) as LockInfo[];
      expect(infos).toHaveLength(2_500);
      expect(new Set(infos.map((i) => i.name)).size).toBe(2_500);
      expect(infos.every((i) => i.locked && i.holders.length === 1)).toBe(true);
    } finally {
      const keys = Array.from({ length: 2_500 }, (_, i) => `${prefix}{job-${i}}`);
      await redis.del(...keys);
    }
  });

  it('release --force deletes a held lock, says who held it, and the holder loses it; on a free lock it says so', async () => {
    const lockName = name();
    // A short lease: the holder's next renewal, at most 200 ms after the delete, finds the key gone.
    const lock = client(redis, { watchdogTimeout: 600 }).getLock(lockName);
    const lost = nextEvent<{ reason: string }>(lock, 'lost', 10_000);
    await lock.lock();
    const cli = holdfast(['release', lockName, '--force']);
    expect((await cli.result()).code).toBe(0);
    expect(cli.stdout).toBe(`released '${lockName}', held by ${os.hostname()} pid ${process.pid}\n`);
    expect(await redis.exists(key(lockName))).toBe(0);
    expect((await lost).reason).toBe('deleted');
    const again = holdfast(['release', lockName, '--force']);
    expect((await again.result()).code).toBe(0);
    expect(again.stdout).toBe(`'${lockName}' was not locked: nothing to release\n`);
  });

  it('release without --force asks the holder to let go and deletes nothing; on a free lock it says so', async () => {
    const lockName = name();
    const lock = client(redis).getLock(lockName);
    const asked = nextEvent<{ name: string }>(lock, 'revokeRequested', 5_000);
    await lock.lock();
    // The holder listens once its client's holder channel is subscribed (without delaying lock()).
    const owner = (await lock.inspect()).holders[0]!.owner;
    const channel = `holdfast:holders:${owner.slice(0, owner.lastIndexOf(':') + 1)}`;
    await waitFor(async () => Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]) === 1, { timeout: 2_000, message: 'holder channel subscribed' });
    const cli = holdfast(['release', lockName]);
    expect((await cli.result()).code).toBe(0);
    expect(cli.stdout).toBe(`asked 1 hold of '${lockName}' to let go\n`);
    expect((await asked).name).toBe(lockName);
    expect(await redis.exists(key(lockName))).toBe(1);
    expect(await lock.isHeldByCurrentScope()).toBe(true);
    await lock.unlock();
    const again = holdfast(['release', lockName]);
    expect((await again.result()).code).toBe(0);
    expect(again.stdout).toBe(`'${lockName}' is not held: nobody to ask\n`);
  });

  it('release without --force on a lock held by holdfast exec: SIGTERM to the command, the exec exits with its status, the lock is free', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    const exec = holdfast(['exec', lockName, '--', ...command(file)]);
    await exec.output(/ready/);
    const release = holdfast(['release', lockName]);
    expect((await release.result()).code).toBe(0);
    expect(release.stdout).toBe(`asked 1 hold of '${lockName}' to let go\n`);
    // The command exits 42 on SIGTERM: its status, not 70 (nothing was lost).
    expect((await exec.result()).code).toBe(42);
    expect(read(file)).toBe('SIGTERM\n');
    expect(await redis.exists(key(lockName))).toBe(0);
  });

  it('asked to let go, then lost before its command ended: the exec exits 70, not the command\'s status', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    // The command notes SIGTERM and runs on (until a line on stdin); no SIGKILL within the spec.
    const exec = holdfast(['exec', lockName, '--grace', '30s', '--', ...command(file, { ignoreTerm: true })]);
    await exec.output(/ready/);
    expect((await holdfast(['release', lockName]).result()).code).toBe(0);
    await waitFor(() => read(file) === 'SIGTERM\n', { timeout: 5_000, interval: 10, message: 'SIGTERM after the request' });
    expect((await holdfast(['release', lockName, '--force']).result()).code).toBe(0);
    await exec.output(/was lost \(deleted\)/, 'the loss reported while the command runs');
    exec.child.stdin!.write('done\n');
    const exit = await exec.result();
    expect(exit.code).toBe(EXIT_LOCK_LOST);
    expect(exec.stderr).toMatch(new RegExp(`exiting 70: lock '${lockName}' was lost \\(deleted\\) before the command ended`));
  });

  it('a semaphore permit asked to let go: SIGTERM to the command, the exec exits with its status, the permit is free', async () => {
    const semName = name();
    const file = path.join(tmp, `${semName}.sig`);
    const exec = holdfast(['exec', semName, '--limit', '2', '--', ...command(file)]);
    await exec.output(/ready/);
    const release = holdfast(['release', semName]);
    expect((await release.result()).code).toBe(0);
    expect(release.stdout).toBe(`asked 1 permit holder of semaphore '${semName}' to let go\n`);
    expect((await exec.result()).code).toBe(42);
    expect(read(file)).toBe('SIGTERM\n');
    expect(await redis.keys(`${key(semName)}*`)).toEqual([]);
  });

  it('release --force reaches holdfast exec at once: its command gets SIGTERM within 100 ms, not at the next renewal', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    // The default 30 s lease: a renewal would find the key gone only seconds later.
    const exec = holdfast(['exec', lockName, '--', ...command(file)]);
    await exec.output(/ready/);
    const release = holdfast(['release', lockName, '--force']);
    expect((await release.result()).code).toBe(0);
    // Measured from the release's exit, which comes after its delete (and its client's close).
    const released = performance.now();
    await waitFor(() => fs.existsSync(file) && read(file) === 'SIGTERM\n', { timeout: 100, interval: 2, message: 'SIGTERM after release --force' });
    expect(performance.now() - released).toBeLessThan(100);
    expect((await exec.result()).code).toBe(EXIT_LOCK_LOST);
  });

  it('release --force on a lock held by holdfast exec: the exec stops its command and exits 70', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.sig`);
    const exec = holdfast(['exec', lockName, '--lease', '600ms', '--', ...command(file)]);
    await exec.output(/ready/);
    const release = holdfast(['release', lockName, '--force']);
    expect((await release.result()).code).toBe(0);
    expect(release.stdout).toMatch(new RegExp(`released '${lockName}', held by ${os.hostname()} pid \\d+`));
    expect((await exec.result()).code).toBe(EXIT_LOCK_LOST);
    expect(read(file)).toBe('SIGTERM\n');
  });
});

describe('Redis unavailable', () => {
  it('exits 69 quickly when nothing listens on the port', async () => {
    const port = await freePort();
    const cli = holdfast(['exec', name(), '--redis', `redis://127.0.0.1:${port}`, '--', 'true']);
    const exit = await cli.result(5_000);
    expect(exit.code).toBe(EXIT_UNAVAILABLE);
    expect(cli.stderr).toMatch(new RegExp(`cannot connect to redis://127.0.0.1:${port}: .*ECONNREFUSED`));
    expect(exit.ms).toBeLessThan(3_000); // startup included
  });

  it('exits 69 after --connect-timeout when Redis does not answer', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
    proxy.blackhole();
    try {
      const cli = holdfast(['exec', name(), '--redis', `redis://127.0.0.1:${proxy.port}`, '--connect-timeout', '500ms', '--', 'true']);
      const exit = await cli.result(5_000);
      expect(exit.code).toBe(EXIT_UNAVAILABLE);
      expect(cli.stderr).toMatch(/cannot connect to .*(no answer within 500 ms|ETIMEDOUT)/);
      expect(exit.ms).toBeGreaterThanOrEqual(500);
      expect(exit.ms).toBeLessThan(3_000);
    } finally {
      await proxy.close();
    }
  });
});

describe('quorum mode', () => {
  it('locks with a majority of masters when one is down, and exits 69 without a majority', async () => {
    const masters = await startMasters(3);
    try {
      await masters[2].stop();
      const lockName = name();
      const file = path.join(tmp, `${lockName}.out`);
      const urls = masters.flatMap((m) => ['--redis', m.url]);
      const cli = holdfast(['exec', lockName, ...urls, '--', ...command(file)]);
      await cli.output(/ready/);
      const up = masters.slice(0, 2).map((m) => new Redis(m.port, '127.0.0.1'));
      try {
        expect(await Promise.all(up.map((r) => r.exists(key(lockName))))).toEqual([1, 1]);
        const status = holdfast(['status', lockName, '--json', ...urls]);
        expect((await status.result()).code).toBe(0);
        expect(JSON.parse(status.stdout)).toMatchObject({ name: lockName, locked: true, holders: [{ host: os.hostname(), count: 1 }] });
        const ls = holdfast(['ls', '--json', ...urls]);
        expect((await ls.result()).code).toBe(0);
        expect((JSON.parse(ls.stdout) as LockInfo[]).map((i) => i.name)).toContain(lockName);
        cli.child.stdin!.write('done\n');
        expect((await cli.result()).code).toBe(0);
        expect(cli.stderr).toMatch(/warning: cannot connect to .*continuing with a majority/);
        expect(await Promise.all(up.map((r) => r.exists(key(lockName))))).toEqual([0, 0]);
      } finally {
        for (const r of up) r.disconnect();
      }
      await masters[1].stop();
      const minority = holdfast(['exec', lockName, ...urls, '--', 'true']);
      const exit = await minority.result(8_000);
      expect(exit.code).toBe(EXIT_UNAVAILABLE);
      expect(exit.ms).toBeLessThan(3_000);
      expect(minority.stderr).toMatch(/2 of 3 masters are needed; 1 reachable/);
    } finally {
      await Promise.all(masters.map((m) => m.stop()));
    }
  });
});
