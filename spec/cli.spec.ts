import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { LockClient } from '../lib';
import { parseArgs, parseDuration, UsageError } from '../lib/cli/args';
import { EXIT_LOCK_BUSY, EXIT_LOCK_LOST, EXIT_NOT_FOUND, EXIT_UNAVAILABLE, EXIT_USAGE } from '../lib/cli/exit-codes';
import { freePort, startMasters, startServer, type RedisServer } from '../scripts/servers';
import { TcpProxy } from './helpers/proxy';
import { waitFor, withTimeout } from './helpers/wait';

// `holdfast exec`, the bin: run from source (node -r tsx/cjs), as a user
// runs dist/cjs/cli/index.js, with its stdio piped here. The commands it runs are small node or sh
// scripts that report on stdout and wait for stdin or a signal: no fixed sleeps here.

const ROOT = path.resolve(__dirname, '..');
const EXIT_BOUND = 15_000;

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

  constructor(args: string[], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, ['-r', 'tsx/cjs', 'lib/cli/index.ts', ...args], {
      cwd: ROOT,
      // REDIS_URL points at the spec's server, so that a default can never reach 6379.
      env: { ...process.env, REDIS_URL: server.url, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
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
    return withTimeout(this.closed, bound, `holdfast ${this.child.spawnargs.slice(5).join(' ')} (stderr: ${JSON.stringify(this.stderr)})`);
  }
}

function holdfast(args: string[], env?: NodeJS.ProcessEnv): Cli {
  return new Cli(args, env);
}

function client(connection: Redis = redis, options?: ConstructorParameters<typeof LockClient>[1]): LockClient {
  const c = new LockClient(connection, options);
  clients.push(c);
  return c;
}

/**
 * A command (node -e) that prints "ready <token>", then ends on a line on stdin with
 * status 0, or on SIGTERM/SIGINT/SIGHUP after writing the signal's name to `file`
 * with status 42. With ignoreTerm it notes SIGTERM and keeps running.
 */
function command(file: string, opts: { ignoreTerm?: boolean } = {}): string[] {
  const script = `
    const fs = require('fs');
    const file = process.argv[1];
    for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => {
      fs.appendFileSync(file, s + '\\n');
      if (!(${Boolean(opts.ignoreTerm)} && s === 'SIGTERM')) process.exit(42);
    });
    process.stdin.on('data', () => process.exit(0));
    process.stdout.write('ready ' + process.env.HOLDFAST_LOCK + ' ' + process.env.HOLDFAST_TOKEN + '\\n');
  `;
  return [process.execPath, '-e', script, file];
}

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
    const parsed = parseArgs(
      ['exec', '--wait', '2s', 'jobs', '--redis', 'redis://a:1', '--redis=redis://b:2', '--redis', 'redis://c:3', '--lease', '600', '--grace=250ms', '--prefix', 'p:', '-v', '--', 'cmd', '--wait', '--', 'x'],
      {},
    );
    expect(parsed).toEqual({
      kind: 'exec',
      options: {
        name: 'jobs',
        urls: ['redis://a:1', 'redis://b:2', 'redis://c:3'],
        wait: 2_000,
        lease: 600,
        grace: 250,
        prefix: 'p:',
        connectTimeout: 5_000,
        verbose: true,
        command: 'cmd',
        args: ['--wait', '--', 'x'],
      },
    });
  });

  it('defaults: wait forever, lease 30 s, grace 5 s, REDIS_URL else 127.0.0.1:6379', () => {
    const a = parseArgs(['exec', 'n', '--', 'true'], { REDIS_URL: 'redis://h:7000' });
    expect(a).toMatchObject({ kind: 'exec', options: { urls: ['redis://h:7000'], wait: undefined, lease: 30_000, grace: 5_000, prefix: undefined } });
    const b = parseArgs(['exec', 'n', '--', 'true'], {});
    expect(b).toMatchObject({ options: { urls: ['redis://127.0.0.1:6379'] } });
  });

  it.each([
    [[], /missing command/],
    [['frob'], /unknown command 'frob'/],
    [['exec'], /missing lock name/],
    [['exec', 'n'], /missing -- and the command/],
    [['exec', 'n', '--'], /missing the command after --/],
    [['exec', 'n', 'ls', '-l'], /unexpected argument 'ls'.*put the command after --/],
    [['exec', 'n', '--wait', '-1', '--', 'true'], /--wait takes a number/],
    [['exec', 'n', '--wait', 'soon', '--', 'true'], /--wait takes a number/],
    [['exec', 'n', '--lease', '50', '--', 'true'], /--lease must be at least 100 ms/],
    [['exec', 'n', '--grace', '--', 'true'], /--grace needs a value/],
    [['exec', 'n', '--redis', 'http://x', '--', 'true'], /redis:\/\/ or rediss:\/\//],
    [['exec', 'n', '--redis', 'redis://a:1', '--redis', 'redis://a:1', '--', 'true'], /twice/],
    [['exec', 'n', '--prefix', 'a{b', '--', 'true'], /must not contain \{/],
    [['exec', 'n', '--bogus', '--', 'true'], /unknown option '--bogus'/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseArgs(argv, {})).toThrow(UsageError);
    expect(() => parseArgs(argv, {})).toThrow(message);
  });

  it('reads durations with units', () => {
    expect(parseDuration('--wait', '0', 0)).toBe(0);
    expect(parseDuration('--wait', '1.5s', 0)).toBe(1_500);
    expect(parseDuration('--wait', '2m', 0)).toBe(120_000);
    expect(parseDuration('--wait', '250ms', 0)).toBe(250);
    expect(() => parseDuration('--wait', '1e3', 0)).toThrow(UsageError);
  });

  it('--help and exec --help exit 0 and explain the options, signals and exit statuses', async () => {
    const main = holdfast(['--help']);
    const exec = holdfast(['exec', 'whatever', '--help']);
    expect((await main.result()).code).toBe(0);
    expect(main.stdout).toMatch(/holdfast exec <name> \[options\] -- <command>/);
    expect((await exec.result()).code).toBe(0);
    for (const word of ['--redis', '--wait', '--lease', '--grace', '--prefix', 'watchdog', 'SIGTERM', 'SIGKILL', 'HOLDFAST_TOKEN']) {
      expect(exec.stdout).toContain(word);
    }
    for (const status of [EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_LOCK_LOST, EXIT_LOCK_BUSY]) expect(exec.stdout).toContain(`  ${status}  `);
  });

  it('bad usage exits 64 with a message on stderr, before touching Redis', async () => {
    const cli = holdfast(['exec', 'n', 'echo', 'hi']);
    const exit = await cli.result();
    expect(exit.code).toBe(EXIT_USAGE);
    expect(cli.stderr).toMatch(/holdfast: unexpected argument 'echo'/);
    expect(cli.stderr).toMatch(/--help/);
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
    await waitFor(async () => (await redis.pubsub('NUMSUB', `${key(lockName)}:ch`))[1] === 3, { timeout: 10_000, interval: 10, message: 'three execs waiting' });
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

  it('--wait 0 while another client holds the lock: exits 75 without running the command', async () => {
    const lockName = name();
    const file = path.join(tmp, `${lockName}.ran`);
    const other = client();
    await other.getLock(lockName).lock();
    const cli = holdfast(['exec', lockName, '--wait', '0', '--', 'touch', file]);
    const exit = await cli.result();
    expect(exit.code).toBe(EXIT_LOCK_BUSY);
    expect(cli.stderr).toMatch(new RegExp(`lock '${lockName}' is held by another owner`));
    expect(fs.existsSync(file)).toBe(false);
    // Still the other client's.
    expect(await redis.hlen(key(lockName))).toBe(1);
    const bounded = holdfast(['exec', lockName, '--wait', '300', '--', 'touch', file]);
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
    const cli = holdfast(['exec', lockName, '--lease', '300', '-v', '--', ...command(file)]);
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
    const cli = holdfast(['exec', lockName, '--lease', '600', '--', ...command(file)]);
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
    const cli = holdfast(['exec', lockName, '--lease', '600', '--grace', '300', '--', ...command(file, { ignoreTerm: true })]);
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
      const cli = holdfast(['exec', lockName, '--redis', `redis://127.0.0.1:${proxy.port}`, '--lease', '600', '--', ...command(file)]);
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
      const cli = holdfast(['exec', name(), '--redis', `redis://127.0.0.1:${proxy.port}`, '--connect-timeout', '500', '--', 'true']);
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
