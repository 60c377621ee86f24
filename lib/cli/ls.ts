// `holdfast ls [PATTERN] [--json]`: the names held now, as a lock, by readers or as a
// semaphore. Names come from one SCAN (never KEYS: it blocks the server for as long as
// it takes to walk every key) over `<prefix>{<pattern>}*`, keeping the keys that show a
// hold: `<prefix>{<name>}` (the lock hash), `…:read` (read holds), `…:sem` (permits);
// other suffixes (`:fence`, `:queue`, ...) are not holds. Each name is then inspected
// through the client, so that in quorum mode a lock counts when a majority holds it, and
// one released during the walk is left out.
import type Redis from 'ioredis';
import type { LockClient } from '../index.js';
import type { LsOptions } from './args.js';
import { withClient } from './admin.js';
import { DEFAULT_PREFIX } from './defaults.js';
import { EXIT_OK } from './exit-codes.js';
import type { Io } from './io.js';
import { handlesOf, isHeld, statusOf, type NameStatus } from './kinds.js';
import { showList } from './show.js';

/** Keys per SCAN call: a hint to Redis, which bounds the work of each call. */
const SCAN_COUNT = 1_000;
/** Inspections in flight at once. */
const PARALLEL = 32;

/** What a key shows a hold of. */
export type HeldKind = 'lock' | 'read' | 'semaphore';
const SUFFIXES: readonly [string, HeldKind][] = [
  ['}', 'lock'],
  ['}:read', 'read'],
  ['}:sem', 'semaphore'],
];

export function ls(o: LsOptions, io: Io): Promise<number> {
  return withClient(o, io, async ({ locks, reachable }) => {
    const prefix = o.prefix ?? DEFAULT_PREFIX;
    const names = new Map<string, Set<HeldKind>>();
    for (const redis of reachable) {
      for (const { name, kind } of await scanHeld(redis, prefix, o.pattern)) {
        const kinds = names.get(name) ?? new Set<HeldKind>();
        names.set(name, kinds.add(kind));
      }
    }
    const held = (await inspectAll(locks, names, o.urls.length > 1)).filter(isHeld);
    io.stdout(o.json ? `${JSON.stringify(held)}\n` : showList(held));
    return EXIT_OK;
  });
}

/** `text` matched literally by Redis' MATCH (which treats * ? [ ] \ as pattern syntax). */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** Redis' MATCH pattern (`*`, `?`, `[abc]`, `[^a]`, `[a-z]`, `\` escapes) as a RegExp of the whole string. */
export function globRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') out += '[\\s\\S]*';
    else if (c === '?') out += '[\\s\\S]';
    else if (c === '\\' && i + 1 < pattern.length) out += escapeRegExp(pattern[++i]);
    else if (c === '[') {
      const end = closingBracket(pattern, i);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negated = body.startsWith('^');
      if (negated) body = body.slice(1);
      let set = '';
      for (let j = 0; j < body.length; j++) {
        if (body[j] === '\\' && j + 1 < body.length) set += escapeRegExp(body[++j]);
        else if (body[j] === '-' && set !== '' && j + 1 < body.length) set += '-';
        else set += escapeRegExp(body[j]);
      }
      out += `[${negated ? '^' : ''}${set}]`;
      i = end;
    } else out += escapeRegExp(c);
  }
  return new RegExp(`^${out}$`);
}

function closingBracket(pattern: string, open: number): number {
  for (let i = open + 1; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === ']') return i;
  }
  return -1;
}

function escapeRegExp(c: string): string {
  return c.replace(/[\\^$.*+?()[\]{}|/-]/g, (x) => `\\${x}`);
}

/** The name and kind of hold a key `<prefix>{<name>}`, `…:read` or `…:sem` shows; undefined for any other key. */
export function heldKeyOf(key: string, prefix: string): { name: string; kind: HeldKind } | undefined {
  if (!key.startsWith(`${prefix}{`)) return undefined;
  for (const [suffix, kind] of SUFFIXES) {
    if (!key.endsWith(suffix)) continue;
    const name = key.slice(prefix.length + 1, -suffix.length);
    return name === '' ? undefined : { name, kind };
  }
  return undefined;
}

/** The lock name in a key `<prefix>{<name>}`, or undefined for any other key. */
export function lockNameOf(key: string, prefix: string): string | undefined {
  const held = heldKeyOf(key, prefix);
  return held?.kind === 'lock' ? held.name : undefined;
}

async function scanHeld(redis: Redis, prefix: string, pattern: string): Promise<{ name: string; kind: HeldKind }[]> {
  const match = `${escapeGlob(prefix)}{${pattern}}*`;
  // MATCH's trailing * also takes names longer than the pattern allows (`x}y` for `x`): the name itself must match.
  const wanted = globRegExp(pattern);
  const found: { name: string; kind: HeldKind }[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', SCAN_COUNT);
    cursor = next;
    for (const key of keys) {
      const held = heldKeyOf(key, prefix);
      if (held && wanted.test(held.name)) found.push(held);
    }
  } while (cursor !== '0');
  return found;
}

async function inspectAll(locks: LockClient, names: ReadonlyMap<string, ReadonlySet<HeldKind>>, quorum: boolean): Promise<NameStatus[]> {
  const sorted = [...names.keys()].sort();
  const infos: NameStatus[] = [];
  for (let i = 0; i < sorted.length; i += PARALLEL) {
    const batch = sorted.slice(i, i + PARALLEL).map((name) => {
      const kinds = names.get(name)!;
      return statusOf(handlesOf(locks, name, quorum), { read: kinds.has('read'), semaphore: kinds.has('semaphore') });
    });
    infos.push(...(await Promise.all(batch)));
  }
  return infos;
}
