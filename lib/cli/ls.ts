// `holdfast ls [PATTERN] [--json]`: the locks held now. Names come from SCAN (never
// KEYS: it blocks the server for as long as it takes to walk every key) over the lock
// keys `<prefix>{<name>}`; keys with a suffix (`:fence`, `:queue`, ...) are not locks.
// Each name is then inspected through the client, so that in quorum mode a lock counts
// when a majority holds it, and one released during the walk is left out.
import type Redis from 'ioredis';
import type { LockClient, LockInfo } from '../index.js';
import type { LsOptions } from './args.js';
import { withClient } from './admin.js';
import { DEFAULT_PREFIX } from './defaults.js';
import { EXIT_OK } from './exit-codes.js';
import type { Io } from './io.js';
import { showList } from './show.js';

/** Keys per SCAN call: a hint to Redis, which bounds the work of each call. */
const SCAN_COUNT = 1_000;
/** Inspections in flight at once. */
const PARALLEL = 32;

export function ls(o: LsOptions, io: Io): Promise<number> {
  return withClient(o, io, async ({ locks, reachable }) => {
    const prefix = o.prefix ?? DEFAULT_PREFIX;
    const names = new Set<string>();
    for (const redis of reachable) for (const name of await scanNames(redis, prefix, o.pattern)) names.add(name);
    const held = (await inspectAll(locks, [...names].sort())).filter((info) => info.locked);
    io.stdout(o.json ? `${JSON.stringify(held)}\n` : showList(held));
    return EXIT_OK;
  });
}

/** `text` matched literally by Redis' MATCH (which treats * ? [ ] \ as pattern syntax). */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** The lock name in a key `<prefix>{<name>}`, or undefined for any other key. */
export function lockNameOf(key: string, prefix: string): string | undefined {
  if (!key.startsWith(`${prefix}{`) || !key.endsWith('}')) return undefined;
  const name = key.slice(prefix.length + 1, -1);
  return name === '' ? undefined : name;
}

async function scanNames(redis: Redis, prefix: string, pattern: string): Promise<string[]> {
  const match = `${escapeGlob(prefix)}{${pattern}}`;
  const names: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', SCAN_COUNT);
    cursor = next;
    for (const key of keys) {
      const name = lockNameOf(key, prefix);
      if (name !== undefined) names.push(name);
    }
  } while (cursor !== '0');
  return names;
}

async function inspectAll(locks: LockClient, names: readonly string[]): Promise<LockInfo[]> {
  const infos: LockInfo[] = [];
  for (let i = 0; i < names.length; i += PARALLEL) {
    infos.push(...(await Promise.all(names.slice(i, i + PARALLEL).map((name) => locks.getLock(name).inspect()))));
  }
  return infos;
}
