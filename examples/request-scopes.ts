import express from 'express';
import fastify from 'fastify';
import Koa from 'koa';
import { expressScope, fastifyScope, koaScope, type LockClient } from 'holdfast';

// #region example
// One owner scope per request, so that nested lock() calls of a request reenter:
export const scopedApps = (locks: LockClient) => ({
  express: express().use(expressScope(locks)), // also Connect, and NestJS's app.use()
  koa: new Koa().use(koaScope(locks)),
  fastify: fastify().register(fastifyScope(locks)), // before the routes
});
// #endregion example
