import { checkScopeSource, type ScopeSource } from './scope-source.js';

/**
 * Koa middleware that runs the downstream middleware of each request in its own owner
 * scope: `app.use(koaScope(locks))`. Koa calls downstream middleware from inside
 * next(), and awaits keep the scope, so it spans the whole request.
 */
export function koaScope(locks: ScopeSource): (ctx: unknown, next: () => Promise<unknown>) => Promise<unknown> {
  const source = checkScopeSource(locks, 'koaScope');
  return (_ctx, next) => source.scope(next);
}
