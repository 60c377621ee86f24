/**
 * Reentrant distributed locks on Redis: scoped ownership, watchdog renewal with loss
 * events, pub/sub hand-off, quorum and Cluster, fencing tokens. Start at
 * {@link LockClient}; a lock's methods are on {@link Lock}, its errors derive from
 * {@link LockError}.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { LockClient } from 'holdfast';
 *
 * const locks = new LockClient(new Redis());
 * await locks.getLock('order:42').run(async ({ signal, token }) => {
 *   // held here; renewed by the watchdog, released after
 * });
 * ```
 *
 * @module holdfast
 */
export { LockClient } from './client.js';
export type { Lock, Held, HeldContext, LockInfo, LockHolder } from './handles/types.js';
export type { MultiLock, MultiHeld, MultiHeldContext } from './primitives/multi/types.js';
export type { Semaphore, Permit, PermitContext, PermitOptions, SemaphoreInfo, PermitHolder } from './primitives/semaphore/types.js';
export type { ReadWriteLock } from './primitives/read-write/types.js';
export { LockError } from './errors/LockError.js';
export { LockNotHeldError } from './errors/LockNotHeldError.js';
export { LockLostError, type LossReason } from './errors/LockLostError.js';
export { LockTimeoutError } from './errors/LockTimeoutError.js';
export { LockUnavailableError } from './errors/LockUnavailableError.js';
export { QuorumError, type Vote } from './errors/QuorumError.js';
export { CommandTimeoutError } from './errors/CommandTimeoutError.js';
export { ReplicaSyncError } from './errors/ReplicaSyncError.js';
export { LockRevokedError } from './errors/LockRevokedError.js';
export type { LockErrorCode } from './errors/codes.js';
export type { ClientOptions, LockOptions, TryLockOptions, ScopedOptions, SyncReplicas } from './options.js';
export type { Connection, GlideConnection, IoredisConnection, NodeRedisConnection } from './connection.js';
export type { LockKind, AcquiredEvent, ReleasedEvent, RenewedEvent, RenewalFailedEvent, AcquireFailedEvent, LostEvent, RevokeRequestedEvent, LockEvents, ClientEvents } from './events.js';
export { expressScope } from './integrations/express.js';
export { koaScope } from './integrations/koa.js';
export { fastifyScope, type FastifyHooks, type FastifyScopePlugin, type FastifyHook, type FastifyHookDone } from './integrations/fastify.js';
export type { ScopeSource } from './integrations/scope-source.js';
