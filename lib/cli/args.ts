// The command line of `holdfast`, parsed by hand: node:util's parseArgs treats a value
// that starts with "-" (`--grace --`, `--wait -1`) differently across Node versions,
// and the messages below name exactly what is wrong.
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_GRACE_MS, DEFAULT_LEASE_MS, DEFAULT_REDIS_URL, MIN_LEASE_MS } from './defaults.js';
import { EXEC_HELP, MAIN_HELP } from './help.js';

/** Bad usage: main() prints the message and exits EXIT_USAGE, before touching Redis. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface ExecOptions {
  name: string;
  /** One URL: a single Redis. Three or more: quorum mode over independent masters. Never repeated. */
  urls: string[];
  /** Milliseconds to wait for the lock; undefined: wait until held. */
  wait: number | undefined;
  /** The watchdog's lease (renewed every third of it), at least MIN_LEASE_MS. */
  lease: number;
  /** After a loss, ms between SIGTERM and SIGKILL to the command. */
  grace: number;
  /** Key prefix; undefined: the library's default. Never contains { or }. */
  prefix: string | undefined;
  connectTimeout: number;
  verbose: boolean;
  command: string;
  args: string[];
}

export type Parsed = { kind: 'help'; text: string } | { kind: 'version' } | { kind: 'exec'; options: ExecOptions };

const UNITS: Record<string, number> = { '': 1, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Options that take a value, as `--flag value` or `--flag=value`. */
const VALUED = ['--redis', '--wait', '--lease', '--grace', '--prefix', '--connect-timeout'] as const;
type Valued = (typeof VALUED)[number];

/** '250', '250ms', '1.5s', '2m', '1h' -> milliseconds, at least `min`. */
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
  return parseExec(rest, env);
}

/** The arguments after `exec`: options and the lock name in any order, then -- and the command. */
function parseExec(rest: readonly string[], env: NodeJS.ProcessEnv): Parsed {
  const o = {
    urls: [] as string[],
    wait: undefined as number | undefined,
    lease: DEFAULT_LEASE_MS,
    grace: DEFAULT_GRACE_MS,
    prefix: undefined as string | undefined,
    connectTimeout: DEFAULT_CONNECT_TIMEOUT_MS,
    verbose: false,
  };
  let name: string | undefined;
  let command: string[] | undefined;

  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--') {
      command = rest.slice(i + 1);
      break;
    }
    if (arg === '-h' || arg === '--help') return { kind: 'help', text: EXEC_HELP };
    if (arg === '-v' || arg === '--verbose') {
      o.verbose = true;
      continue;
    }
    if (arg.startsWith('-') && arg !== '-') {
      const eq = arg.indexOf('=');
      const flag = eq > 0 ? arg.slice(0, eq) : arg;
      if (!(VALUED as readonly string[]).includes(flag)) throw new UsageError(`unknown option '${flag}'`);
      let value: string;
      if (eq > 0) value = arg.slice(eq + 1);
      else {
        const next = rest[i + 1];
        if (next === undefined || next === '--') throw new UsageError(`${flag} needs a value`);
        value = next;
        i += 1;
      }
      setOption(o, flag as Valued, value);
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
  if (o.urls.length === 0) o.urls.push(checkUrl(env.REDIS_URL || DEFAULT_REDIS_URL));
  if (new Set(o.urls).size !== o.urls.length) throw new UsageError('the same --redis URL is given twice: quorum mode needs independent masters');
  return { kind: 'exec', options: { name, ...o, command: command[0], args: command.slice(1) } };
}

type Settable = Omit<ExecOptions, 'name' | 'command' | 'args'>;

function setOption(o: Settable, flag: Valued, value: string): void {
  switch (flag) {
    case '--redis':
      o.urls.push(checkUrl(value));
      return;
    case '--wait':
      o.wait = parseDuration(flag, value, 0);
      return;
    case '--lease':
      o.lease = parseDuration(flag, value, MIN_LEASE_MS);
      return;
    case '--grace':
      o.grace = parseDuration(flag, value, 0);
      return;
    case '--connect-timeout':
      o.connectTimeout = parseDuration(flag, value, 1);
      return;
    case '--prefix':
      if (/[{}]/.test(value)) throw new UsageError('--prefix must not contain { or }: the lock name goes in the hash tag');
      o.prefix = value;
      return;
  }
}
