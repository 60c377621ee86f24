/**
 * `npm run demo`: holdfast's mission, live, in well under a minute.
 *
 *   1. worker processes contend for one lock, with nested reentry, and no two
 *      critical sections ever overlap;
 *   2. the watchdog keeps a lock whose work outlives its lease;
 *   3. a holder killed with SIGKILL (`holdfast status` shows who held it first): another
 *      process takes over after about one lease;
 *   4. a holder whose Redis stops answering is told: renewalFailed, then lost;
 *   5. quorum over 3 independent masters keeps locking with one master stopped;
 *   6. a Sentinel failover while a lock is held, without and with syncReplicas.
 *
 * Starts its own redis-server processes (spec/kit/servers) unless REDIS_URL is set;
 * then it uses that Redis, writes only keys under `holdfast-demo:` and deletes them at
 * the end (part 5 still needs local servers, as it stops one).
 *
 * The same file is forked as the worker and holder child processes (argv[2]).
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import Redis from 'ioredis';
import { LockClient, LockLostError, type Lock } from '../lib';
import { TcpProxy } from '../spec/kit/proxy';
import { failoverWhileHeld } from './demo-sentinel';
import { startMasters, startServer, stopAll, type RedisServer } from '../spec/kit/servers';

const PREFIX = 'holdfast-demo:';
const WORKERS = 4;
const ROUNDS = 5;
const WATCHDOG_LEASE = 1_500;
const LONG_WORK = 4_000;

// ---- messages between the demo and its children ---------------------------------------

type ChildMessage =
  | { type: 'ready' }
  | { type: 'section'; worker: number; token: number; start: number; end: number; inside: number; depth: number; waited: number }
  | { type: 'held'; token: number; pid: number }
  | { type: 'done' }
  | { type: 'failed'; error: string };

type ParentMessage = { type: 'go' };

function send(message: ChildMessage): void {
  process.send?.(message);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function connect(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, disconnectTimeout: 200 });
  redis.on('error', () => undefined); // outages are part of the show; holdfast reports them
  return redis;
}

/** A child that disconnects from the demo itself, at its end. */
let finishing = false;

// ---- child: a worker of part 1 ----------------------------------------------------------

async function worker(url: string, id: number, rounds: number): Promise<void> {
  const redis = connect(url);
  const locks = new LockClient(redis, { keyPrefix: PREFIX });
  const lock = locks.getLock('orders');
  await redis.ping();
  send({ type: 'ready' });
  await new Promise<void>((resolve) => process.once('message', (m: ParentMessage) => m.type === 'go' && resolve()));

  // Two service methods that both lock 'orders'; the first calls the second while
  // holding it, in the same scope, so the second reenters instead of deadlocking.
  const placeOrder = async () => {
    const asked = performance.now();
    await lock.run(async ({ token }) => {
      const waited = Math.round(performance.now() - asked);
      const start = Date.now();
      // An overlap detector independent of clocks: how many are inside right now.
      const inside = await redis.incr(`${PREFIX}inside`);
      await sleep(15 + Math.random() * 25);
      const depth = await reserveStock();
      await sleep(5 + Math.random() * 10);
      await redis.decr(`${PREFIX}inside`);
      const end = Date.now();
      send({ type: 'section', worker: id, token, start, end, inside, depth, waited });
    });
  };
  const reserveStock = () => lock.run(() => lock.getHoldCount());

  for (let i = 0; i < rounds; i++) await placeOrder();
  await locks.close();
  await redis.quit();
  send({ type: 'done' });
  finishing = true;
  process.disconnect();
}

// ---- child: the holder of part 3 --------------------------------------------------------

async function holder(url: string): Promise<void> {
  const redis = connect(url);
  const locks = new LockClient(redis, { keyPrefix: PREFIX, watchdogTimeout: WATCHDOG_LEASE });
  const lock = locks.getLock('report');
  const held = await lock.acquire();
  send({ type: 'held', token: held.token, pid: process.pid });
  // Works "forever": the demo kills this process with SIGKILL.
  setInterval(() => undefined, 1_000);
}

function child(): void {
  const [role, url, id, rounds] = process.argv.slice(2);
  // The demo is gone (Ctrl-C, crash): go too.
  process.on('disconnect', () => finishing || process.exit(0));
  const run = role === 'worker' ? worker(url, Number(id), Number(rounds)) : holder(url);
  run.catch((error: unknown) => {
    send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exit(1);
  });
}

// ---- the demo ---------------------------------------------------------------------------

const tty = process.stdout.isTTY === true && !process.env.NO_COLOR;
const paint = (code: number) => (text: string | number) => (tty ? `\x1b[${code}m${text}\x1b[0m` : String(text));
const dim = paint(2);
const bold = paint(1);
const green = paint(32);
const red = paint(31);
const yellow = paint(33);
const cyan = paint(36);
const colors = [paint(36), paint(35), paint(33), paint(34), paint(32), paint(31)];

const t0 = performance.now();
const stamp = () => `${((performance.now() - t0) / 1000).toFixed(2).padStart(6)}s`;
let part = '';
function say(text: string): void {
  process.stdout.write(`${dim(stamp())} ${part ? `${dim(`[${part}]`)} ` : ''}${text}\n`);
}
function heading(n: number, title: string): void {
  part = String(n);
  process.stdout.write(`\n${bold(`${n}. ${title}`)}\n`);
}

interface Section {
  who: string;
  token: number;
  start: number;
  end: number;
}

const summary = {
  sections: 0,
  handOffs: 0,
  reentries: 0,
  violations: 0,
  renewals: 0,
  renewalFailures: 0,
  takeoverMs: NaN,
  lostAfterMs: NaN,
  quorumSections: 0,
};
const problems: string[] = [];

function violation(text: string): void {
  summary.violations += 1;
  problems.push(text);
  say(red(`VIOLATION: ${text}`));
}

/** Sections must not overlap in time, and fencing tokens must grow in their order. */
function checkSections(sections: Section[]): number {
  const ordered = [...sections].sort((a, b) => a.start - b.start);
  let handOffs = 0;
  for (let i = 1; i < ordered.length; i++) {
    const prev = ordered[i - 1];
    const cur = ordered[i];
    if (cur.start < prev.end) violation(`${cur.who} entered at ${cur.start} before ${prev.who} left at ${prev.end}`);
    if (cur.token <= prev.token) violation(`token ${cur.token} of ${cur.who} after token ${prev.token} of ${prev.who}`);
    if (cur.who !== prev.who) handOffs += 1;
  }
  return handOffs;
}

const children = new Set<ChildProcess>();

function spawnChild(args: string[]): ChildProcess {
  const c = fork(__filename, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(c);
  c.once('exit', () => children.delete(c));
  return c;
}

function nextMessage<T extends ChildMessage['type']>(c: ChildProcess, type: T, ms: number): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no '${type}' from child ${c.pid} within ${ms} ms`)), ms);
    const onMessage = (m: ChildMessage) => {
      if (m.type === type) done(undefined, m as Extract<ChildMessage, { type: T }>);
      else if (m.type === 'failed') done(new Error(`child ${c.pid} failed: ${m.error}`));
    };
    const onExit = (code: number | null) => done(new Error(`child ${c.pid} exited (${code}) before '${type}'`));
    const done = (error?: Error, m?: Extract<ChildMessage, { type: T }>) => {
      clearTimeout(timer);
      c.off('message', onMessage);
      c.off('exit', onExit);
      if (error) reject(error);
      else resolve(m!);
    };
    c.on('message', onMessage);
    c.once('exit', onExit);
  });
}

function exited(c: ChildProcess): Promise<void> {
  return c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((resolve) => c.once('exit', () => resolve()));
}

/** Part 1: WORKERS processes x ROUNDS critical sections, each with a nested reentry. */
async function partContention(url: string): Promise<void> {
  heading(1, `Mutual exclusion with reentry: ${WORKERS} worker processes, ${ROUNDS} orders each`);
  say(`each order: placeOrder() locks 'orders' and calls reserveStock(), which locks it again (reentry)`);
  const workers = Array.from({ length: WORKERS }, (_, i) => spawnChild(['worker', url, String(i + 1), String(ROUNDS)]));
  await Promise.all(workers.map((w) => nextMessage(w, 'ready', 20_000)));
  say(`${WORKERS} workers up (pids ${workers.map((w) => w.pid).join(', ')}); go`);
  const sections: Section[] = [];
  let previous: number | undefined;
  const finished = Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve, reject) => {
          w.on('message', (m: ChildMessage) => {
            if (m.type === 'failed') reject(new Error(`worker ${w.pid} failed: ${m.error}`));
            if (m.type === 'done') resolve();
            if (m.type !== 'section') return;
            sections.push({ who: `worker ${m.worker}`, token: m.token, start: m.start, end: m.end });
            if (m.depth === 2) summary.reentries += 1;
            else violation(`worker ${m.worker}: the nested lock had hold count ${m.depth}, not 2`);
            if (m.inside !== 1) violation(`worker ${m.worker} found ${m.inside} workers inside the critical section`);
            const handOff = previous !== undefined && previous !== m.worker;
            previous = m.worker;
            say(
              `${colors[(m.worker - 1) % colors.length](`worker ${m.worker}`)} token ${String(m.token).padStart(2)}  ` +
                `${m.end - m.start} ms inside, reentered (hold count ${m.depth}), inside=${m.inside}` +
                `${m.waited > 5 ? dim(`  waited ${m.waited} ms`) : ''}${handOff ? dim('  <- hand-off') : ''}`,
            );
          });
        }),
    ),
  );
  for (const w of workers) w.send({ type: 'go' } satisfies ParentMessage);
  await finished;
  await Promise.all(workers.map(exited));
  const handOffs = checkSections(sections);
  summary.sections += sections.length;
  summary.handOffs += handOffs;
  say(`${sections.length} critical sections, ${handOffs} hand-offs between processes, no overlap in time, tokens strictly increasing`);
}

/** Part 2: a 4 s job under a 1.5 s watchdog lease. */
async function partWatchdog(redis: Redis): Promise<void> {
  heading(2, `Watchdog: ${LONG_WORK / 1000} s of work under a ${WATCHDOG_LEASE} ms lease`);
  const locks = new LockClient(redis, { keyPrefix: PREFIX, watchdogTimeout: WATCHDOG_LEASE });
  try {
    const lock = locks.getLock('nightly-job');
    lock.on('renewed', () => {
      summary.renewals += 1;
      void lock.remainTimeToLive().then((ttl) => say(`${green('renewed')}: TTL back to ${ttl} ms`));
    });
    const start = performance.now();
    await lock.run(async ({ signal }) => {
      say(`took 'nightly-job' without a lease; TTL ${await lock.remainTimeToLive()} ms, renewed every ${WATCHDOG_LEASE / 3} ms`);
      await sleep(LONG_WORK);
      if (signal.aborted) violation('the watchdog lock was lost');
      say(`work done after ${Math.round(performance.now() - start)} ms, still held (TTL ${await lock.remainTimeToLive()} ms)`);
    });
    say(`released; key exists: ${await lock.isLocked()}`);
    if (summary.renewals < 3) violation(`only ${summary.renewals} renewals in ${LONG_WORK} ms`);
  } finally {
    await locks.close();
  }
}

/**
 * The `holdfast` CLI from source, as `npx holdfast` runs it from dist: its stdout, or a
 * violation when it fails. The URL goes in REDIS_URL rather than argv: one with a
 * password would show in ps.
 */
function holdfastCli(url: string, args: string[]): Promise<string> {
  const root = path.resolve(__dirname, '..');
  return new Promise((resolve) => {
    const cli = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(root, 'lib', 'cli', 'index.ts'), ...args], {
      cwd: root,
      env: { ...process.env, REDIS_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    cli.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
    cli.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
    cli.once('close', (code) => {
      if (code !== 0) violation(`holdfast ${args.join(' ')} exited ${code}: ${err.trim()}`);
      resolve(out);
    });
  });
}

/** Part 3: kill -9 the holder; a waiter gets the lock when the lease runs out. */
async function partKill(url: string, redis: Redis): Promise<void> {
  heading(3, 'A holder process killed with SIGKILL: the lock comes free after one lease');
  const h = spawnChild(['holder', url]);
  const held = await nextMessage(h, 'held', 20_000);
  say(`holder pid ${held.pid} holds 'report' (token ${held.token}, watchdog lease ${WATCHDOG_LEASE} ms)`);
  // Who holds it, as an operator sees it: owner ids carry the host and the pid.
  const status = await holdfastCli(url, ['status', 'report', '--prefix', PREFIX]);
  say(`${cyan(`$ holdfast status report --prefix ${PREFIX}`)}\n${status.replace(/^/gm, '           ').trimEnd()}`);
  if (!status.includes(`pid ${held.pid}`)) violation(`holdfast status does not name the holder pid ${held.pid}`);
  const locks = new LockClient(redis, { keyPrefix: PREFIX, watchdogTimeout: WATCHDOG_LEASE });
  try {
    const lock = locks.getLock('report');
    const takeover = lock.acquire({ waitTime: 10_000 });
    takeover.catch(() => undefined);
    await sleep(700); // the waiter waits through a renewal of the live holder
    const ttl = await lock.remainTimeToLive();
    h.kill('SIGKILL');
    const killedAt = performance.now();
    await exited(h);
    say(`${red('kill -9')} holder pid ${held.pid} (TTL left ${ttl} ms); a waiter in this process is waiting`);
    const mine = await takeover;
    summary.takeoverMs = Math.round(performance.now() - killedAt);
    say(`${green('taken over')} after ${summary.takeoverMs} ms (lease ${WATCHDOG_LEASE} ms), token ${mine.token}`);
    if (mine.token <= held.token) violation(`token ${mine.token} after the killed holder's ${held.token}`);
    if (summary.takeoverMs > WATCHDOG_LEASE + 500) violation(`take-over took ${summary.takeoverMs} ms with a ${WATCHDOG_LEASE} ms lease`);
    summary.handOffs += 1;
    summary.sections += 2;
    await mine.release();
  } finally {
    await locks.close();
  }
}

/**
 * Part 4: the holder loses Redis, through a TCP proxy in front of it: (a) the network
 * resets its connections and refuses new ones: renewals error, renewalFailed, then lost
 * at the lease end; (b) a partition: nothing comes back at all, and the client-side
 * deadline still reports the loss no later than the lease end.
 */
async function partRenewalFailure(url: string, direct: Redis): Promise<void> {
  heading(4, 'Renewal failures: the holder loses its connection to Redis');
  const target = new URL(url);
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
  const others = new LockClient(direct, { keyPrefix: PREFIX });
  try {
    await lose('a', 'ledger', proxy, target, others, () => {
      proxy.refuse(true);
      proxy.drop('reset');
      return 'network down: connections reset, new ones refused';
    });
    proxy.refuse(false);
    await lose('b', 'ledger-2', proxy, target, others, () => {
      proxy.blackhole();
      return 'partition: the connection stays open, nothing comes back';
    });
  } finally {
    await others.close();
    await proxy.close();
  }
}

async function lose(step: string, name: string, proxy: TcpProxy, target: URL, others: LockClient, fault: () => string): Promise<void> {
  const viaProxy = new Redis({
    host: '127.0.0.1',
    port: proxy.port,
    username: decodeURIComponent(target.username) || undefined,
    password: decodeURIComponent(target.password) || undefined,
    db: Number(target.pathname.slice(1)) || 0,
    maxRetriesPerRequest: 1,
    disconnectTimeout: 200,
  });
  viaProxy.on('error', () => undefined);
  const locks = new LockClient(viaProxy, { keyPrefix: PREFIX, watchdogTimeout: WATCHDOG_LEASE });
  try {
    const lock = locks.getLock(name);
    let faultAt = 0;
    let failures = 0;
    const since = () => `${Math.round(performance.now() - faultAt)} ms after the fault`;
    lock.on('renewed', () => say(`${step}) ${green('renewed')}`));
    lock.on('renewalFailed', (e) => {
      failures += 1;
      summary.renewalFailures += 1;
      say(`${step}) ${yellow('renewalFailed')} attempt ${e.attempt}, ${since()}: ${e.error.message}`);
    });
    lock.on('lost', (e) => {
      const ms = Math.round(performance.now() - faultAt);
      summary.lostAfterMs = Number.isNaN(summary.lostAfterMs) ? ms : Math.max(summary.lostAfterMs, ms);
      say(`${step}) ${red('lost')} (reason '${e.reason}') ${since()}`);
    });
    const outcome = lock.run(async ({ signal }) => {
      say(`${step}) holding '${name}' through a TCP proxy, lease ${WATCHDOG_LEASE} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          faultAt = performance.now();
          say(`${step}) ${yellow(fault())}`);
        }, 600);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      say(`${step}) the job's signal aborted (${(signal.reason as Error).message}): the job stops`);
    });
    const error = await outcome.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(error instanceof LockLostError)) violation(`run() ended with ${String(error)} instead of LockLostError`);
    else say(`${step}) run() rejected with LockLostError (reason ${error.reason})`);
    if (performance.now() - faultAt > WATCHDOG_LEASE + 300) violation(`the loss was reported ${since()}, after the ${WATCHDOG_LEASE} ms lease`);
    if (step === 'a' && failures === 0) violation('no renewalFailed event before the loss');
    // Lost no later than the lease on the server ends: another client gets it now or very soon.
    const t = performance.now();
    const other = others.getLock(name);
    if (!(await other.tryLock({ waitTime: 5_000, leaseTime: 1_000 }))) violation(`nobody could take the lost '${name}'`);
    else {
      say(`${step}) another client took '${name}' ${Math.round(performance.now() - t)} ms after the loss was reported`);
      summary.handOffs += 1;
      await other.unlock();
    }
  } finally {
    await locks.close();
    viaProxy.disconnect();
  }
}

/** Part 5: three independent masters, one stopped: still a majority. */
async function partQuorum(): Promise<void> {
  heading(5, 'Quorum over 3 independent masters, one of them stopped');
  const masters: RedisServer[] = await startMasters(3);
  const connections = masters.map((m) => connect(m.url));
  const a = new LockClient(connections, { keyPrefix: PREFIX });
  const b = new LockClient(connections, { keyPrefix: PREFIX });
  try {
    await Promise.all(connections.map((c) => c.ping()));
    say(`masters on ports ${masters.map((m) => m.port).join(', ')}`);
    await masters[2].stop();
    say(`${red('stopped')} the master on port ${masters[2].port}: it counts as a failed vote, 2 of 3 still grant`);
    const sections: Section[] = [];
    let inside = 0;
    const rounds = 3;
    const run = async (who: string, locks: LockClient) => {
      const lock: Lock = locks.getLock('inventory');
      for (let i = 0; i < rounds; i++) {
        const asked = performance.now();
        await lock.run(async ({ token }) => {
          const start = performance.now();
          const waited = Math.round(start - asked);
          inside += 1;
          if (inside !== 1) violation(`${inside} quorum clients inside at once`);
          const held = await Promise.all(connections.slice(0, 2).map((c) => c.exists(`${PREFIX}{inventory}`)));
          await sleep(30);
          inside -= 1;
          sections.push({ who, token, start, end: performance.now() });
          say(`${who} token ${token}: key on the live masters: ${held.join(' ')}${waited > 5 ? dim(`  waited ${waited} ms`) : ''}`);
        });
      }
    };
    await Promise.all([run(cyan('client A'), a), run(paint(35)('client B'), b)]);
    const handOffs = checkSections(sections);
    summary.quorumSections = sections.length;
    summary.sections += sections.length;
    summary.handOffs += handOffs;
    say(`${sections.length} critical sections with 2 of 3 masters, ${handOffs} hand-off${handOffs === 1 ? '' : 's'}, no overlap`);
  } finally {
    await a.close();
    await b.close();
    for (const c of connections) c.disconnect();
    await Promise.all(masters.map((m) => m.stop()));
  }
}

/** A primary, two replicas, three sentinels; the primary killed right after a grant (scripts/demo-sentinel.ts). */
async function partSentinel(): Promise<void> {
  heading(6, 'A Sentinel failover while a lock is held');
  say(bold('without syncReplicas'));
  const without = await failoverWhileHeld(say, {}, PREFIX);
  say(without.secondOwner ? yellow('the grant was never replicated: lost with the primary') : 'the grant reached a replica in time this run');
  say(bold('with syncReplicas { min: 1, timeout: 1000 }'));
  const withSync = await failoverWhileHeld(say, { syncReplicas: { min: 1, timeout: 1_000 } }, PREFIX);
  if (withSync.secondOwner || withSync.lost) violation('a lock taken with syncReplicas did not survive the failover');
  else say(green('the lock survived the failover with its owner'));
}

async function deleteDemoKeys(redis: Redis): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

function hasRedisServer(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

async function demo(): Promise<number> {
  const given = process.env.REDIS_URL;
  const canStart = hasRedisServer();
  if (!given && !canStart) {
    process.stderr.write('demo: redis-server is not on PATH. Install Redis (e.g. apt-get install redis-server), or set REDIS_URL to a Redis to use.\n');
    return 1;
  }
  process.stdout.write(`${bold('holdfast demo')}: reentrant distributed locks on Redis\n`);
  let server: RedisServer | undefined;
  let url: string;
  if (given) {
    url = given;
    say(`using REDIS_URL ${given.replace(/\/\/([^:@]*):[^@]*@/, '//$1:***@')}; keys under '${PREFIX}' are deleted at the end`);
  } else {
    server = await startServer();
    url = server.url;
    say(`started redis-server pid ${server.pid} on ${server.url}`);
  }
  const redis = connect(url);
  try {
    await redis.ping();
    if (given) await deleteDemoKeys(redis);

    await partContention(url);
    await partWatchdog(redis);
    await partKill(url, redis);
    await partRenewalFailure(url, redis);
    if (canStart) {
      await partQuorum();
      await partSentinel();
    } else {
      heading(5, 'Quorum over 3 independent masters');
      say(yellow('skipped: needs redis-server on PATH to start and stop masters of its own'));
    }
  } finally {
    part = '';
    if (given) {
      const n = await deleteDemoKeys(redis).catch(() => 0);
      say(`deleted ${n} '${PREFIX}' keys (fencing counters included)`);
    }
    redis.disconnect();
    await stopAll();
  }

  process.stdout.write(`\n${bold('Summary')}\n`);
  const row = (label: string, value: string) => process.stdout.write(`  ${label.padEnd(30)} ${value}\n`);
  row('critical sections', `${summary.sections} (${WORKERS * ROUNDS} by ${WORKERS} processes with reentry, ${summary.quorumSections} under quorum, 2 around a kill -9)`);
  row('hand-offs', String(summary.handOffs));
  row('reentries (hold count 2)', String(summary.reentries));
  row('watchdog renewals', `${summary.renewals} (lease ${WATCHDOG_LEASE} ms, work ${LONG_WORK} ms)`);
  row('take-over after kill -9', `${summary.takeoverMs} ms (lease ${WATCHDOG_LEASE} ms)`);
  row('renewal failures, then lost', `${summary.renewalFailures} renewalFailed events; lost at most ${summary.lostAfterMs} ms after the fault`);
  row('violations', summary.violations === 0 ? green('0') : red(String(summary.violations)));
  row('time', `${((performance.now() - t0) / 1000).toFixed(1)} s`);
  for (const p of problems) process.stdout.write(`  ${red(p)}\n`);
  return summary.violations === 0 ? 0 : 1;
}

function killChildren(): void {
  for (const c of children) c.kill('SIGKILL');
}

if (process.argv[2] === 'worker' || process.argv[2] === 'holder') {
  child();
} else {
  let stopping = false;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      if (stopping) process.exit(130);
      stopping = true;
      process.stdout.write(`\n${sig}: stopping\n`);
      killChildren();
      stopAll().finally(() => process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1)));
    });
  }
  demo().then(
    (code) => {
      killChildren();
      process.exitCode = code;
    },
    async (error: unknown) => {
      process.stdout.write(`\n${red('demo failed:')} ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      killChildren();
      await stopAll().catch(() => undefined);
      process.exitCode = 1;
    },
  );
}
