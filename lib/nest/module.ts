import { Inject, Injectable, Module, type DynamicModule, type ForwardReference, type ModuleMetadata, type Type, type OnModuleDestroy, type Provider } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { LockClient } from '../client.js';
import type { Connection } from '../connection.js';
import type { ClientOptions } from '../options.js';
import { describe } from '../options.js';
import { RequestScopeInterceptor } from './request-scope.js';

/** What HoldfastModule builds its LockClient from: `new LockClient(connection, options)`. */
export interface HoldfastModuleOptions {
  /** A connection, or several independent masters (quorum mode), as LockClient takes them; the module never closes it. */
  readonly connection: Connection | readonly Connection[];
  /** The client's options (watchdogTimeout, keyPrefix, ...). */
  readonly options?: ClientOptions;
  /** Run each handler call in its own owner scope (RequestScopeInterceptor); default true. Read by forRoot only. */
  readonly requestScope?: boolean;
}

/** forRootAsync: the options from a factory with injected dependencies (a config service, a connection provider). */
export interface HoldfastModuleAsyncOptions {
  /** Modules that export what `inject` names. */
  readonly imports?: readonly NestImport[];
  /** Builds the options; its parameters are the `inject` tokens' providers. */
  readonly useFactory: (...args: any[]) => HoldfastModuleOptions | Promise<HoldfastModuleOptions>;
  /** The providers useFactory gets, in order. */
  readonly inject?: readonly any[];
  /** Run each handler call in its own owner scope (RequestScopeInterceptor); default true. */
  readonly requestScope?: boolean;
}

/** One of a Nest module's `imports` (as Nest's ModuleMetadata types it). */
export type NestImport = Type | DynamicModule | Promise<DynamicModule> | ForwardReference;

const OPTIONS = Symbol('holdfast.options');

/** Closes the module's LockClient when the application shuts down (its watchdog, timers and subscriptions). */
class LockClientCloser implements OnModuleDestroy {
  constructor(private readonly locks: LockClient) {}
  onModuleDestroy(): Promise<void> {
    return this.locks.close();
  }
}
Injectable()(LockClientCloser);
Inject(LockClient)(LockClientCloser, undefined as unknown as string, 0);

/**
 * holdfast in a Nest application: provides one `LockClient` to every module (inject it
 * by its class), runs each handler call in its own owner scope (unless `requestScope:
 * false`), and closes the client at shutdown. `@WithLock` methods use that client.
 */
export class HoldfastModule {
  /** The module with a LockClient built from `options`. */
  static forRoot(options: HoldfastModuleOptions): DynamicModule {
    if (options === null || typeof options !== 'object') throw new TypeError(`HoldfastModule.forRoot(options): options must be an object, got ${describe(options)}`);
    return build({ provide: OPTIONS, useValue: options }, [], options.requestScope);
  }

  /** The module with a LockClient built from the options `useFactory` returns. */
  static forRootAsync(options: HoldfastModuleAsyncOptions): DynamicModule {
    if (typeof options?.useFactory !== 'function') throw new TypeError(`HoldfastModule.forRootAsync(options): options.useFactory must be a function, got ${describe(options?.useFactory)}`);
    return build({ provide: OPTIONS, useFactory: options.useFactory, inject: [...(options.inject ?? [])] }, options.imports ?? [], options.requestScope);
  }
}
Module({})(HoldfastModule);

function build(options: Provider, imports: readonly NestImport[], requestScope = true): DynamicModule {
  const client: Provider = { provide: LockClient, useFactory: (o: HoldfastModuleOptions) => new LockClient(o.connection, o.options), inject: [OPTIONS] };
  const scope: Provider[] = requestScope ? [{ provide: APP_INTERCEPTOR, useClass: RequestScopeInterceptor }] : [];
  return { module: HoldfastModule, global: true, imports: [...imports], providers: [options, client, LockClientCloser, ...scope], exports: [LockClient] };
}
