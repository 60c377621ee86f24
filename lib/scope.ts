import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * An owner scope: Node's stand-in for Redisson's thread. Code running inside one scope
 * (however many awaits deep) is one owner, so nested lock() calls reenter.
 * One storage for the process, so a scope opened through one LockClient is also a
 * scope for the others (each client still has its own owner ids).
 */
export interface Scope {
  readonly id: string;
}

const storage = new AsyncLocalStorage<Scope>();
let lastScope = 0;

export function currentScope(): Scope | undefined {
  return storage.getStore();
}

export function newScope(): Scope {
  return { id: (++lastScope).toString(36) };
}

/** Runs fn inside scope; never enterWith: that would leak the scope to the caller's sibling tasks. */
export function runInScope<T>(scope: Scope, fn: () => T): T {
  return storage.run(scope, fn);
}
