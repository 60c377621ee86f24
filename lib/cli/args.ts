// The command line of `holdfast`: which command, then its options, read by readFlags
// (node:util's parseArgs underneath) and checked here, so that bad usage is a
// UsageError naming what is wrong before anything touches Redis.
import { CONNECT_FLAGS, readConnectOptions, type ConnectOptions } from './connect-args.js';
import { DEFAULT_GRACE_MS, DEFAULT_LEASE_MS, MIN_LEASE_MS } from './defaults.js';
import { parseDuration } from './duration.js';
import { EXIT_LOCK_BUSY } from './exit-codes.js';
import { has, readFlags, single, type Flags, type FlagSpecs, type Positionals } from './flags.js';
import { COMMAND_HELP, MAIN_HELP, type CommandName } from './help.js';
import { UsageError } from './usage-error.js';

export { UsageError } from './usage-error.js';
export { parseDuration } from './duration.js';

export interface ExecOptions extends ConnectOptions {
  name: string;
  /** Milliseconds to wait for the lock; 0: one attempt (-n); undefined: wait until held. */
  wait: number | undefined;
  /** The exit status when the lock is busy (not taken within --wait): -E, else EXIT_LOCK_BUSY. */
  conflictExitCode: number;
  /** The watchdog's lease (renewed every third of it), at least MIN_LEASE_MS. */
  lease: number;
  /** After a loss, ms between SIGTERM and SIGKILL to the command. */
  grace: number;
  /** --limit N: run under one permit of the semaphore <name> of N (at most N commands at once) instead of the lock. */
  limit: number | undefined;
  verbose: boolean;
  command: string;
  args: string[];
}

export interface StatusOptions extends ConnectOptions {
  name: string;
  json: boolean;
}

export interface LsOptions extends ConnectOptions {
  /** A Redis MATCH pattern on lock names (`*`, `?`, `[abc]`, `\` escapes). */
  pattern: string;
  json: boolean;
}

export interface ReleaseOptions extends ConnectOptions {
  name: string;
  /** Delete the lock (forceUnlock); without it, ask its holders to let go (requestRelease). */
  force: boolean;
}

export type Parsed =
  | { kind: 'help'; text: string }
  | { kind: 'version' }
  | { kind: 'exec'; options: ExecOptions }
  | { kind: 'status'; options: StatusOptions }
  | { kind: 'ls'; options: LsOptions }
  | { kind: 'release'; options: ReleaseOptions };

const COMMANDS: readonly CommandName[] = ['exec', 'status', 'ls', 'release'];
const USAGE = 'holdfast exec|status|ls|release ... (holdfast --help)';

const HELP_FLAG: FlagSpecs = { help: { type: 'boolean', short: 'h' } };
const FLAGS: Record<CommandName, FlagSpecs> = {
  exec: {
    ...HELP_FLAG,
    ...CONNECT_FLAGS,
    wait: { type: 'string', short: 'w' },
    nonblock: { type: 'boolean', short: 'n' },
    'conflict-exit-code': { type: 'string', short: 'E' },
    lease: { type: 'string' },
    grace: { type: 'string' },
    limit: { type: 'string' },
    verbose: { type: 'boolean', short: 'v' },
  },
  status: { ...HELP_FLAG, ...CONNECT_FLAGS, json: { type: 'boolean' } },
  ls: { ...HELP_FLAG, ...CONNECT_FLAGS, json: { type: 'boolean' } },
  release: { ...HELP_FLAG, ...CONNECT_FLAGS, force: { type: 'boolean' } },
};

/** The words before `--`: a lock name (a pattern for ls), and nothing more. */
const WORDS: Record<CommandName, Positionals> = {
  exec: { max: 1, tooMany: (word, [name]) => `unexpected argument '${word}': put the command after --, as in holdfast exec ${name} -- ${word}` },
  status: { max: 1, tooMany: (word) => `unexpected argument '${word}': holdfast status takes one lock name` },
  ls: { max: 1, tooMany: (word) => `unexpected argument '${word}': holdfast ls takes one pattern (quote it, or the shell expands it: holdfast ls 'order:*')` },
  release: { max: 1, tooMany: (word) => `unexpected argument '${word}': holdfast release takes one lock name` },
};

function isCommand(word: string): word is CommandName {
  return (COMMANDS as readonly string[]).includes(word);
}

/** Parses argv (without `node` and the script). Throws UsageError on bad usage. */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError(`missing command: ${USAGE}`);
  if (first === '-h' || first === '--help' || first === 'help') {
    const topic = rest[0];
    return { kind: 'help', text: topic !== undefined && isCommand(topic) ? COMMAND_HELP[topic] : MAIN_HELP };
  }
  if (first === '-V' || first === '--version') return { kind: 'version' };
  if (!isCommand(first)) throw new UsageError(`unknown command '${first}': ${USAGE}`);
  const flags = readFlags(rest, FLAGS[first], WORDS[first]);
  if (has(flags, 'help')) return { kind: 'help', text: COMMAND_HELP[first] };
  switch (first) {
    case 'exec':
      return { kind: 'exec', options: execOptions(flags, env) };
    case 'status':
      return { kind: 'status', options: { ...readConnectOptions(flags, env), name: lockName('status', flags), json: has(flags, 'json') } };
    case 'ls':
      return { kind: 'ls', options: { ...readConnectOptions(flags, env), pattern: lsPattern(flags), json: has(flags, 'json') } };
    case 'release':
      return { kind: 'release', options: releaseOptions(flags, env) };
  }
}

/** The one positional of status and release; `--` has no meaning there. */
function lockName(command: 'status' | 'release', flags: Flags): string {
  if (flags.rest !== undefined) throw new UsageError(`${command} takes no command: unexpected '--'`);
  const [name] = flags.positionals;
  if (name === undefined) throw new UsageError(`missing lock name: holdfast ${command} <name>`);
  return checkName(name);
}

function checkName(name: string): string {
  if (name === '') throw new UsageError('the lock name must not be empty');
  if (name.length > 1024) throw new UsageError('the lock name must be at most 1024 characters');
  return name;
}

function lsPattern(flags: Flags): string {
  if (flags.rest !== undefined) throw new UsageError(`ls takes no command: unexpected '--'`);
  const [pattern] = flags.positionals;
  if (pattern === '') throw new UsageError('the pattern must not be empty (leave it out to list every lock)');
  return pattern ?? '*';
}

function releaseOptions(flags: Flags, env: NodeJS.ProcessEnv): ReleaseOptions {
  const name = lockName('release', flags);
  return { ...readConnectOptions(flags, env), name, force: has(flags, 'force') };
}

/** The arguments after `exec`: options and the lock name in any order, then -- and the command. */
function execOptions(flags: Flags, env: NodeJS.ProcessEnv): ExecOptions {
  const [name] = flags.positionals;
  if (name === undefined) throw new UsageError('missing lock name: holdfast exec <name> -- <command>');
  checkName(name);
  const command = flags.rest;
  if (command === undefined) throw new UsageError('missing -- and the command to run: holdfast exec <name> -- <command>');
  if (command.length === 0 || command[0] === '') throw new UsageError('missing the command after --');

  const waitText = single(flags, 'wait');
  if (has(flags, 'nonblock') && waitText !== undefined) throw new UsageError('-n/--nonblock and -w/--wait exclude each other (-n is -w 0)');
  const wait = has(flags, 'nonblock') ? 0 : waitText === undefined ? undefined : parseDuration('--wait', waitText, 0);
  const lease = single(flags, 'lease');
  const grace = single(flags, 'grace');
  return {
    ...readConnectOptions(flags, env),
    name,
    wait,
    conflictExitCode: exitCode(single(flags, 'conflict-exit-code')),
    lease: lease === undefined ? DEFAULT_LEASE_MS : parseDuration('--lease', lease, MIN_LEASE_MS),
    grace: grace === undefined ? DEFAULT_GRACE_MS : parseDuration('--grace', grace, 0),
    limit: limit(single(flags, 'limit')),
    verbose: has(flags, 'verbose'),
    command: command[0],
    args: command.slice(1),
  };
}

/** The --limit of exec: how many commands may run at once (the semaphore's permits). */
function limit(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw new UsageError(`--limit takes a whole number of commands, at least 1, got '${text}'`);
  return Number(text);
}

function exitCode(text: string | undefined): number {
  if (text === undefined) return EXIT_LOCK_BUSY;
  if (!/^\d{1,3}$/.test(text) || Number(text) > 255) {
    throw new UsageError(`-E/--conflict-exit-code takes an exit status from 0 to 255, got '${text}'`);
  }
  return Number(text);
}
