import { Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Observable } from 'rxjs';
import { LockClient } from '../client.js';

/**
 * Runs every handler call (each HTTP request, message or GraphQL resolver call) in its
 * own owner scope (`locks.scope`), so the nested service calls of one request reenter
 * the locks it holds and two requests exclude each other. An interceptor, not a
 * middleware, so that it works on every Nest platform (Express, Fastify,
 * microservices): the handler runs when its observable is subscribed, inside the scope.
 */
export class RequestScopeInterceptor implements NestInterceptor {
  constructor(private readonly locks: LockClient) {}

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return new Observable((subscriber) => this.locks.scope(() => next.handle().subscribe(subscriber)));
  }
}
Injectable()(RequestScopeInterceptor);
Inject(LockClient)(RequestScopeInterceptor, undefined as unknown as string, 0);
