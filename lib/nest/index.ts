/**
 * holdfast in a NestJS application: {@link HoldfastModule} provides one `LockClient`
 * (inject it by its class) and runs each handler call in its own owner scope;
 * {@link WithLock} runs a method under a lock named from its arguments. A separate
 * entry point, so that the main one never loads `@nestjs/common`, `@nestjs/core` or
 * `rxjs` (optional peers).
 *
 * @module holdfast/nest
 */
export { HoldfastModule, type HoldfastModuleOptions, type HoldfastModuleAsyncOptions, type NestImport } from './module.js';
export { WithLock, type WithLockOptions, type LockName } from './with-lock.js';
export { RequestScopeInterceptor } from './request-scope.js';
