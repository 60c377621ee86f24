// The command line split into options, positionals and what follows `--`, by node:util's
// parseArgs. Its tokens are checked here rather than by its strict mode, for two reasons:
// the messages name exactly what is wrong, and they are the same on every Node version.
// Node 20 takes the word after a string option as its value even when it starts with
// '-' (`--wait --` makes "--" the wait; strict mode then throws "ambiguous"), while
// other versions leave it alone and report the option without a value. Here a value
// that starts with '-' counts only when written inline (`--prefix=-x`, `-w-1`), so both
// behaviours end in the same "needs a value".
import { parseArgs } from 'node:util';
import { UsageError } from './usage-error.js';

export interface FlagSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** May be given more than once (each value is kept, in order). */
  multiple?: boolean;
}

export type FlagSpecs = Record<string, FlagSpec>;

export interface Flags {
  /** Every value of each string option given, in order; booleans given map to []. */
  given: Map<string, string[]>;
  /** The words that are not options, before `--`. */
  positionals: string[];
  /** Everything after the first `--`, untouched; undefined without `--`. */
  rest: string[] | undefined;
}

/** How many words a command takes before `--`, and what to say about one more. */
export interface Positionals {
  max: number;
  tooMany(word: string, before: readonly string[]): string;
}

/**
 * Reads `argv` against `specs`. Throws a UsageError for the first thing wrong, in the
 * order of argv: an unknown, repeated or value-less option, or a word too many (so that
 * `exec n ls -l` is about the missing `--` before `ls`, not about `-l`).
 */
export function readFlags(argv: readonly string[], specs: FlagSpecs, words: Positionals): Flags {
  const { tokens } = parseArgs({ args: [...argv], options: specs, strict: false, allowPositionals: true, tokens: true });
  const given = new Map<string, string[]>();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'option-terminator') return { given, positionals, rest: argv.slice(token.index + 1) };
    if (token.kind === 'positional') {
      if (positionals.length === words.max) throw new UsageError(words.tooMany(token.value, positionals));
      positionals.push(token.value);
      continue;
    }
    const spec = Object.hasOwn(specs, token.name) ? specs[token.name] : undefined;
    if (!spec) throw new UsageError(`unknown option '${token.rawName}'`);
    const long = `--${token.name}`;
    const values = given.get(token.name) ?? [];
    if (spec.type === 'boolean') {
      if (token.value !== undefined) throw new UsageError(`${token.rawName} takes no value, got '${token.rawName}=${token.value}'`);
      given.set(token.name, values); // given twice means the same as once
      continue;
    }
    if (given.has(token.name) && !spec.multiple) throw new UsageError(`${long} is given twice`);
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) {
      const hint = token.value === undefined || token.value === '--' ? '' : ` (a value that starts with '-' goes after '=': ${long}=${token.value})`;
      throw new UsageError(`${token.rawName} needs a value${hint}`);
    }
    given.set(token.name, [...values, token.value]);
  }
  return { given, positionals, rest: undefined };
}

/** The one value of a string option, or undefined when it was not given. */
export function single(flags: Flags, name: string): string | undefined {
  return flags.given.get(name)?.[0];
}

export function has(flags: Flags, name: string): boolean {
  return flags.given.has(name);
}
