export { LockClient } from './client.js';
export { Lock, type Held, type HeldContext } from './lock.js';
export { LockError } from './errors/LockError.js';
export { LockNotHeldError } from './errors/LockNotHeldError.js';
export { LockLostError, type LossReason } from './errors/LockLostError.js';
export { QuorumError, type Vote } from './errors/QuorumError.js';
export type { ClientOptions, LockOptions, TryLockOptions, ScopedOptions } from './options.js';
export type { Connection } from './connection.js';
export type { AcquiredEvent, ReleasedEvent, RenewedEvent, RenewalFailedEvent, LostEvent, LockEvents, ClientEvents } from './events.js';
