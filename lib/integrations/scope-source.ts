import { describe } from '../options.js';

/**
 * What a scope integration needs of the client: only `scope(fn)`. Typed structurally
 * so that the integrations import nothing but this (and no framework at all).
 */
export interface ScopeSource {
  /** Runs fn in a new owner scope (LockClient.scope). */
  scope<T>(fn: () => T): T;
}

/** Throws a TypeError naming the argument when it has no scope(fn). */
export function checkScopeSource(locks: unknown, where: string): ScopeSource {
  if (typeof (locks as Partial<ScopeSource> | null)?.scope !== 'function') {
    throw new TypeError(`${where}(locks): locks must be a LockClient, got ${describe(locks)}`);
  }
  return locks as ScopeSource;
}
