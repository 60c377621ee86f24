import type { Engine } from './engine/engine.js';
import type { EventHub } from './engine/event-hub.js';
import { reLease } from './engine/re-lease.js';
import { releaseLastOfAll } from './engine/release.js';
import { takeAtOnce } from './engine/take-at-once.js';
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

/** p, or a LockUnavailableError saying what could not be done when Redis could not be reached (final errors pass as they are). */
function reached<T>(keys: LockKeys, doing: (name: string) => string, p: Promise<T>): Promise<T> {
  return p.catch((error: unknown) => {
    throw isFinal(error) ? error : unavailable(keys.name, error, doing(`'${keys.name}'`));
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
    acquire: (primitive, keys, owner, leaseTime, waitTime, signal, settleBy) => engine.acquire(primitive, keys, owner, leaseTime, waitTime, signal, settleBy),
    release: (hold) => engine.release(hold),
    acquireAll: (primitive, keys, owner, leaseTime, waitTime, signal) => takeAtOnce(engine, primitive, keys, owner, leaseTime, waitTime, signal),
    releaseAll: (holds) => releaseLastOfAll(engine, holds),
    reLease: (holds, lease, settleBy) => reLease(engine, holds, lease, settleBy),
    commandBound: (lease) => engine.timeoutFor(lease ?? engine.settings.watchdogTimeout),
    // A call that could not reach Redis rejects with LockUnavailableError, as a wait does.
    forceUnlock: (keys, primitive) => reached(keys, (n) => `force-unlock ${n}`, engine.forceUnlock(keys, primitive)),
    requestRelease: (keys, primitive) => reached(keys, (n) => `request-release ${n}`, engine.requestRelease(keys, primitive)),
    isLocked: (keys) => reached(keys, (n) => `tell whether ${n} is locked`, store.isLocked(keys, queryTimeout)),
    holdCount: (keys, owner) => reached(keys, (n) => `read the hold count of ${n}`, store.holdCount(keys, owner, queryTimeout)),
    pttl: (keys) => reached(keys, (n) => `read the TTL of ${n}`, store.pttl(keys, queryTimeout)),
    inspect: (keys, primitive) => reached(keys, (n) => `inspect ${n}`, primitive?.inspect ? primitive.inspect(keys, queryTimeout) : store.inspect(keys, queryTimeout)),
    query: (keys, doing, call) => reached(keys, doing, call(queryTimeout)),
    eventsOf: (name, create) => (create ? events.of(name, true) : events.of(name, false)),
    forgetEvents: (name) => events.forget(name),
  };
}
