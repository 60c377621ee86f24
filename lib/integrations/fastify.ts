import { AsyncResource } from 'node:async_hooks';
import { checkScopeSource, type ScopeSource } from './scope-source.js';

/** Fastify's callback that ends a hook or a plugin's registration. */
export type FastifyHookDone = (error?: Error) => void;
/** A Fastify request hook, callback style. */
export type FastifyHook = (request: object, reply: unknown, done: FastifyHookDone) => void;

/** The part of a Fastify instance the plugin uses. */
export interface FastifyHooks {
  /** Adds a request hook (Fastify's own method). */
  addHook(name: 'onRequest' | 'preValidation' | 'preHandler', hook: FastifyHook): unknown;
}

/** A Fastify plugin (callback style) that applies to the instance it is registered on. */
export type FastifyScopePlugin = (instance: FastifyHooks, options: unknown, done: FastifyHookDone) => void;

/**
 * A Fastify plugin that runs each request in its own owner scope:
 * `app.register(fastifyScope(locks))`. Register it before the routes (and before
 * plugins whose hooks should see the scope).
 *
 * Fastify reads a request body from stream events, so the hooks after it (and the
 * handler) would run in the stream's async context, outside the scope. The plugin
 * opens the scope in onRequest, keeps it in an AsyncResource, and re-enters it in
 * preValidation and preHandler, as @fastify/request-context does.
 */
export function fastifyScope(locks: ScopeSource): FastifyScopePlugin {
  const source = checkScopeSource(locks, 'fastifyScope');
  // By request, not on it: no property added to Fastify's request objects.
  const scopes = new WeakMap<object, AsyncResource>();
  const reenter: FastifyHook = (request, _reply, done) => {
    const scope = scopes.get(request);
    if (scope) scope.runInAsyncScope(done);
    else done();
  };
  const plugin: FastifyScopePlugin = (instance, _options, done) => {
    instance.addHook('onRequest', (request, _reply, next) =>
      source.scope(() => {
        scopes.set(request, new AsyncResource('holdfast.scope'));
        next();
      }),
    );
    instance.addHook('preValidation', reenter);
    instance.addHook('preHandler', reenter);
    done();
  };
  // fastify-plugin's marks, without depending on it: hooks for the whole instance, not
  // only for an encapsulated child context, and a readable name in fastify.printPlugins().
  Object.assign(plugin, { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: 'holdfast-scope' });
  return plugin;
}
