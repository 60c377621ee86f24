export { LockClient } from './client';
export { Lock, type Held, type HeldContext } from './lock';
export { LockError } from './errors/LockError';
export { LockNotHeldError } from './errors/LockNotHeldError';
export { LockLostError, type LossReason } from './errors/LockLostError';
export { QuorumError, type Vote } from './errors/QuorumError';
export type { ClientOptions, LockOptions, TryLockOptions, ScopedOptions } from './options';
export type { Connection } from './connection';
export type { AcquiredEvent, ReleasedEvent, RenewedEvent, RenewalFailedEvent, LostEvent, LockEvents, ClientEvents } from './events';
