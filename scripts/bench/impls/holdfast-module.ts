/**
 * Loading holdfast: each checkout's build (dist/cjs, what users run), made by
 * buildHoldfast() before the run for the working tree and the --baseline checkout alike.
 * BENCH_HOLDFAST_FROM=lib loads lib/index.ts through tsx instead, for both: tsx's
 * keepNames helper (`__name`) wraps every named closure, which inflates closure-heavy
 * code, so the two must come the same way for the comparison to stay fair.
 *
 * The bench touches holdfast only through the public API typed below, so that both
 * versions load while the internals change between them.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
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

/** Where holdfast is loaded from (inherited by the bench's child processes). */
const FROM: 'dist' | 'lib' = process.env.BENCH_HOLDFAST_FROM === 'lib' ? 'lib' : 'dist';

function entryOf(root: string): string {
  return FROM === 'dist' ? path.join(root, 'dist', 'cjs', 'index.js') : path.join(root, 'lib', 'index.ts');
}

/**
 * Builds the checkout at `root` (its own scripts/build.mjs), unless the bench loads lib/.
 * Throws when it has no build script or the build fails.
 */
export function buildHoldfast(root = WORKING_TREE_ROOT): void {
  if (FROM === 'lib') return;
  const script = path.join(root, 'scripts', 'build.mjs');
  if (!fs.existsSync(script)) throw new Error(`${root} has no scripts/build.mjs: run with BENCH_HOLDFAST_FROM=lib`);
  execFileSync(process.execPath, [script], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * The working tree's holdfast, or (with `root`) the one in that checkout. Loaded on
 * first use, so a process loads only the versions it runs (the watchdog child's heap
 * figures hold one version's module graph).
 */
export function loadHoldfast(root = WORKING_TREE_ROOT): HoldfastModule {
  const cached = loaded.get(root);
  if (cached) return cached;
  const entry = entryOf(root);
  // A plain require: the bench runs as CommonJS (under tsx, whose hooks compile .ts files
  // outside this checkout too, for BENCH_HOLDFAST_FROM=lib). Each root is a separate module graph.
  const mod: unknown = require(entry);
  const LockClient = (mod as { LockClient?: unknown } | null)?.LockClient;
  if (typeof LockClient !== 'function') throw new Error(`${entry} does not export a LockClient class`);
  const holdfast = { LockClient } as HoldfastModule;
  loaded.set(root, holdfast);
  return holdfast;
}

/**
 * The LockClient class of the working tree (or of the checkout at `root`), loaded as
 * loadHoldfast() loads it, typed with the working tree's full API: for the scenarios
 * that use more of it than HoldfastClient names (semaphore, multi-lock, read-write lock).
 */
export function lockClientClass(root = WORKING_TREE_ROOT): typeof WorkingTree.LockClient {
  return loadHoldfast(root).LockClient as unknown as typeof WorkingTree.LockClient;
}
