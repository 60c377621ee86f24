/**
 * Loading holdfast: the working tree's lib/ (compiled by tsc with the bench), or another
 * checkout's lib/index.ts (--baseline) loaded at run time through the same loader (tsx).
 *
 * The bench touches holdfast only through the public API typed below, so that both
 * versions load while the internals change between them.
 */
import path from 'node:path';
import type Redis from 'ioredis';
import type { createClient } from 'redis';

type NodeRedisClient = ReturnType<typeof createClient>;
import type * as WorkingTree from '../../../lib/index';

export interface HoldfastLock {
  lock(): Promise<unknown>;
  unlock(): Promise<unknown>;
}

export interface HoldfastClient {
  getLock(name: string): HoldfastLock;
  getFairLock(name: string): HoldfastLock;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'lost', listener: (event: { name: string; reason: string }) => void): unknown;
  on(event: 'renewed', listener: () => void): unknown;
  on(event: 'renewalFailed', listener: () => void): unknown;
  close(): Promise<void>;
}

export interface HoldfastModule {
  // A baseline version may know only ioredis: node-redis rows run on the working tree only.
  LockClient: new (connection: Redis | Redis[] | NodeRedisClient | NodeRedisClient[], options: { watchdogTimeout: number }) => HoldfastClient;
}

/** Compile-time check that the working tree still offers what the bench uses. */
export const WORKING_TREE_FITS: typeof WorkingTree extends HoldfastModule ? true : never = true;

/** This checkout's root. */
const WORKING_TREE_ROOT = path.join(__dirname, '..', '..', '..');
const loaded = new Map<string, HoldfastModule>();

/**
 * The working tree's holdfast, or (with `root`) the one in that checkout. Loaded on
 * first use, so a process loads only the versions it runs (the watchdog child's heap
 * figures hold one version's module graph).
 */
export function loadHoldfast(root = WORKING_TREE_ROOT): HoldfastModule {
  const cached = loaded.get(root);
  if (cached) return cached;
  const entry = path.join(root, 'lib', 'index.ts');
  // A plain require: the bench runs as CommonJS under tsx, whose hooks compile .ts files
  // outside this checkout too. Each root is a separate module graph.
  const mod: unknown = require(entry);
  const LockClient = (mod as { LockClient?: unknown } | null)?.LockClient;
  if (typeof LockClient !== 'function') throw new Error(`${entry} does not export a LockClient class`);
  const holdfast = { LockClient } as HoldfastModule;
  loaded.set(root, holdfast);
  return holdfast;
}
