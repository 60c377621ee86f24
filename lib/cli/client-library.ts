// The Redis client library the bin connects with: the project's own ioredis, or else
// iovalkey (ioredis's API). Loaded on first connection, not at start, so that --help,
// --version and usage errors work in a project that has neither.
import type Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';

export type RedisConstructor = new (url: string, options: RedisOptions) => Redis;

/** Tried in this order; each exports ioredis's Redis class as its module value or `.default`. */
const LIBRARIES = ['ioredis', 'iovalkey'] as const;

/** Why no library could be loaded: one line, with the command that fixes it. */
export class ClientLibraryMissing extends Error {
  constructor() {
    super(`the CLI connects with ioredis or iovalkey, and neither is installed here: run 'npm install ioredis' (node-redis alone is not enough for the CLI)`);
    this.name = 'ClientLibraryMissing';
  }
}

let loaded: RedisConstructor | undefined;

/**
 * The first library of LIBRARIES that is installed. Throws ClientLibraryMissing when
 * none is; any other failure (a library that is installed but broken) is rethrown as is.
 */
export function redisConstructor(load: (id: string) => unknown = require): RedisConstructor {
  if (loaded !== undefined) return loaded;
  for (const id of LIBRARIES) {
    let exported: unknown;
    try {
      exported = load(id);
    } catch (error) {
      if (isMissing(error, id)) continue;
      throw error;
    }
    const candidate = typeof exported === 'function' ? exported : (exported as { default?: unknown }).default;
    if (typeof candidate !== 'function') throw new TypeError(`${id} exports no Redis class`);
    loaded = candidate as RedisConstructor;
    return loaded;
  }
  throw new ClientLibraryMissing();
}

/** Whether `error` says that `id` itself is not installed (not that something it requires is missing). */
function isMissing(error: unknown, id: string): boolean {
  return (error as { code?: unknown }).code === 'MODULE_NOT_FOUND' && (error as Error).message.split('\n')[0]!.includes(`'${id}'`);
}
