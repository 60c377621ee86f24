import type { Engine } from './engine/engine.js';
import type { EventHub } from './engine/event-hub.js';
import { reLease } from './engine/re-lease.js';
import { unavailable } from './engine/unavailable.js';
import { isFinal } from './errors/final.js';
import type { LockPort } from './handles/port.js';
import { NameKeys } from './store/name-keys.js';
import type { LockKeys, Store } from './store/types.js';

/** What the client gives the port it hands its handles. */
export interface PortWiring {
  readonly engine: Engine;
  readonly store: Store;
  readonly events: EventHub;
  /** Bound of one query (isLocked, inspect, ...). */
  readonly queryTimeout: number;
  readonly keyPrefix: string;
  /** This client's owner ids begin with it (handles/owner-id.ts). */
  readonly ownerPrefix: string;
}

/** p, or a LockUnavailableError naming the lock when Redis could not be reached (final errors pass as they are). */
function reached<T>(keys: LockKeys, p: Promise<T>): Promise<T> {
  return p.catch((error: unknown) => {
    throw isFinal(error) ? error : unavailable(keys.name, error);
  });
}

/** The narrow port a client's handles see (handles/port.ts): keys, owners, and the engine's calls. */
export function makePort({ engine, store, events, queryTimeout, keyPrefix, ownerPrefix: owner }: PortWiring): LockPort {
  let lastUnscoped = 0;
  return {
    assertOpen: () => engine.assertOpen(),
    keysOf: (name) => new NameKeys(name, `${keyPrefix}{${name}}`),
    ownerOf: (scope) => owner + scope.id,
    unscopedOwner: () => `${owner}~${(++lastUnscoped).toString(36)}`,
    holdOf: (keys, owner) => engine.holds.get(keys.id, owner),
    acquire: (primitive, keys, owner, leaseTime, waitTime, signal) => engine.acquire(primitive, keys, owner, leaseTime, waitTime, signal),
    release: (hold) => engine.release(hold),
    reLease: (holds, lease) => reLease(engine, holds, lease),
    // A call that could not reach Redis rejects with LockUnavailableError, as a wait does.
    forceUnlock: (keys, primitive) => reached(keys, engine.forceUnlock(keys, primitive)),
    isLocked: (keys) => reached(keys, store.isLocked(keys, queryTimeout)),
    holdCount: (keys, owner) => reached(keys, store.holdCount(keys, owner, queryTimeout)),
    pttl: (keys) => reached(keys, store.pttl(keys, queryTimeout)),
    inspect: (keys) => reached(keys, store.inspect(keys, queryTimeout)),
    permitsHeld: (keys, limit) => reached(keys, store.semaphore!.held(keys, limit, queryTimeout)),
    eventsOf: (name, create) => (create ? events.of(name, true) : events.of(name, false)),
    forgetEvents: (name) => events.forget(name),
  };
}
