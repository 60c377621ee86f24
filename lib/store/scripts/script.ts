import { createHash } from 'node:crypto';
import type { Arg, CommandPort, RedisClientPort } from '../client/redis-client.js';

/** The source of every Script made: what scripts/preload.ts loads on each master. */
const everySource = new Set<string>();

/** Every script the store can run (each module makes its scripts when it is imported). */
export function scriptSources(): readonly string[] {
  return [...everySource];
}

/**
 * A Lua script with its typed arguments and reply: called by EVALSHA, falling back to
 * EVAL (which also caches it) when the server answers NOSCRIPT (a restarted, flushed
 * or failed-over Redis has lost it; the connection, scripts/preload.ts, loads every
 * script again before that EVAL and keeps later calls behind it). The reply is decoded
 * once, here, beside the script that makes it: callers never index positional replies.
 */
export class Script<Args extends readonly Arg[], Reply> {
  readonly sha: string;

  constructor(
    readonly name: string,
    readonly lua: string,
    private readonly decode: (raw: unknown) => Reply,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
    everySource.add(lua);
  }

  // Not async, one settle step for both outcomes: the hot path pays no extra promise.
  run(client: RedisClientPort, keys: readonly string[], args: Args): Promise<Reply> {
    return client.evalsha(this.sha, keys, args).then(this.decode, (error: unknown) => {
      if (!isNoScript(error)) throw error;
      return client.eval(this.lua, keys, args).then(this.decode);
    });
  }

  /**
   * As run(), with `behind()` sent right after the script on the same connection (one
   * round trip: replies come in order). On NOSCRIPT it is sent again behind the EVAL:
   * what it answers is always about the run that replied. Its failure is returned, not
   * thrown: the caller may have a grant to give back.
   */
  runFollowed<F>(connection: CommandPort, keys: readonly string[], args: Args, behind: () => Promise<F>): Promise<Followed<Reply, F>> {
    const follow = (call: Promise<unknown>): Promise<Followed<Reply, F>> => {
      const next = behind().then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      // The script failed: what followed it answers for nothing (`next` never rejects).
      return call.then((raw) => next.then((after) => ({ reply: this.decode(raw), after })));
    };
    return follow(connection.evalsha(this.sha, keys, args)).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      return follow(connection.eval(this.lua, keys, args));
    });
  }
}

// ioredis and node-redis both reject with the server's message, 'NOSCRIPT No matching script...'.
const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith('NOSCRIPT');

/** A script's reply and what the command sent behind it answered (or its failure). */
export interface Followed<Reply, F> {
  reply: Reply;
  after: { ok: true; value: F } | { ok: false; error: unknown };
}

/** A script's reply as the array of integers Redis sends for a Lua table. */
export const ints = (raw: unknown): number[] => (raw as unknown[]).map(Number);

/**
 * The value of a `local NAME = <integer>` line of a script's source: a constant the
 * client must agree with (read, not repeated). Only a line of its own counts, so that
 * `local A, NAME = 1, 2` can never be misread as NAME = 1.
 */
export function luaConstant(source: string, name: string): number {
  const value = Number(new RegExp(`^local ${name} = (\\d+)$`, 'm').exec(source)?.[1]);
  if (!Number.isSafeInteger(value)) throw new Error(`holdfast internal: no 'local ${name} = <integer>' line in the script source`);
  return value;
}
