import { checkScopeSource, type ScopeSource } from './scope-source.js';

/**
 * Express or Connect middleware that runs the rest of each request in its own owner
 * scope: `app.use(expressScope(locks))`. Nested lock() calls of one request reenter;
 * two requests exclude each other.
 *
 * Express calls the next middleware and the route handler from inside next(), so the
 * scope reaches everything they do, awaits included. A middleware that calls next()
 * from a callback of its own (a stream or socket event) can start the rest in another
 * async context; mount this one after such middleware.
 */
export function expressScope(locks: ScopeSource): (req: unknown, res: unknown, next: (error?: unknown) => void) => void {
  const source = checkScopeSource(locks, 'expressScope');
  return (_req, _res, next) => source.scope(() => next());
}
