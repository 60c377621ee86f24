// What status, ls and release share: connect as exec does (same options, majority rule
// for several --redis), hand a LockClient to the command, and turn a failing Redis into
// EXIT_UNAVAILABLE. A programming error is not caught: main()'s caller makes it EXIT_INTERNAL.
import type Redis from 'ioredis';
import { LockClient } from '../index.js';
import { describeUnavailable } from './acquire-failure.js';
import type { ConnectOptions } from './connect-args.js';
import { connectAll, enoughReached } from './connect.js';
import { EXIT_UNAVAILABLE } from './exit-codes.js';
import { logTo, message, type Io, type Log } from './io.js';

export interface AdminContext {
  locks: LockClient;
  /** The masters that answered at start (one without quorum). */
  reachable: Redis[];
  log: Log;
  io: Io;
}

/** Errors of the program itself, as opposed to what Redis or the network did. */
function isBug(error: unknown): boolean {
  return error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError || error instanceof SyntaxError;
}

/** Connects, runs `use`, closes; resolves with `use`'s status or EXIT_UNAVAILABLE. */
export async function withClient(o: ConnectOptions, io: Io, use: (context: AdminContext) => Promise<number>): Promise<number> {
  const log = logTo(io, false);
  for (const w of o.warnings) log.say(w);
  const connecting = connectAll(o.urls, o.password, o.connectTimeout, new AbortController().signal);
  let locks: LockClient | undefined;
  try {
    const failures = await connecting.failures;
    if (!enoughReached(failures, o.urls.length, connecting.needed, (line) => log.say(line))) return EXIT_UNAVAILABLE;
    locks = new LockClient(o.urls.length > 1 ? connecting.redis : connecting.redis[0], o.prefix === undefined ? {} : { keyPrefix: o.prefix });
    locks.on('error', (error) => log.say(`warning: ${message(error)}`));
    const reachable = connecting.redis.filter((r) => r.status === 'ready');
    return await use({ locks, reachable, log, io });
  } catch (error) {
    if (isBug(error)) throw error;
    log.say(`Redis failed: ${describeUnavailable(error)}`);
    return EXIT_UNAVAILABLE;
  } finally {
    await locks?.close().catch(() => undefined);
    for (const r of connecting.redis) r.disconnect();
  }
}
