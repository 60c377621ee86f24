import { Inject } from '@nestjs/common';
import { LockClient } from '../client.js';
import { LockError } from '../errors/LockError.js';
import type { ScopedOptions } from '../options.js';
import { describe } from '../options.js';

/** Where @WithLock has Nest inject the module's LockClient: a property of the decorated class. */
const LOCKS = Symbol('holdfast.locks');

/** The lock a `@WithLock` method runs under: a fixed name, or one computed from the method's arguments. */
export type LockName<Args extends unknown[] = any[]> = string | ((...args: Args) => string);

/** How a `@WithLock` method waits and holds (as `lock.run`'s options; no signal: a decorator has none to give). */
export interface WithLockOptions extends Pick<ScopedOptions, 'waitTime' | 'leaseTime'> {
  /** Take the fair lock of the name (`getFairLock`) instead of the lock. */
  readonly fair?: boolean;
}

/**
 * A method decorator: the method runs under the lock `name` (`lock.run(fn, options)`),
 * so two calls with the same name exclude each other across processes, and a call
 * made while the current scope holds the lock (a nested service method) reenters it.
 * `name` may be a function of the method's arguments: `@WithLock((id: string) => `order:${id}`)`.
 * Without `waitTime` a call waits until the lock is held; with it, a call that cannot
 * have the lock in time rejects with a `LockTimeoutError`. The class must be a provider
 * (or controller) of an application that imports `HoldfastModule`: Nest injects the
 * module's LockClient into it.
 */
export function WithLock<Args extends unknown[]>(name: LockName<Args>, options: WithLockOptions = {}): MethodDecorator {
  if (typeof name !== 'function' && (typeof name !== 'string' || name === '')) {
    throw new TypeError(`@WithLock(name): name must be a non-empty string or a function of the method's arguments, got ${describe(name)}`);
  }
  if (options === null || typeof options !== 'object') throw new TypeError(`@WithLock(name, options): options must be an object, got ${describe(options)}`);
  const { waitTime, leaseTime, fair = false } = options;
  return (target, key, descriptor) => {
    const method: unknown = descriptor.value;
    if (typeof method !== 'function') throw new TypeError(`@WithLock goes on a method; ${String(key)} is not one`);
    Inject(LockClient)(target, LOCKS);
    const where = `${target.constructor.name}.${String(key)}`;
    const wrapped = function (this: { [LOCKS]?: LockClient }, ...args: Args): Promise<unknown> {
      const locks = this[LOCKS];
      if (!(locks instanceof LockClient)) {
        return Promise.reject(new LockError(`@WithLock on ${where}: no LockClient was injected; import HoldfastModule.forRoot() (or forRootAsync()) in the application`));
      }
      const lockName = typeof name === 'function' ? name(...args) : name;
      if (typeof lockName !== 'string' || lockName === '') {
        return Promise.reject(new TypeError(`@WithLock on ${where}: the name function must return a non-empty string, got ${describe(lockName)}`));
      }
      const lock = fair ? locks.getFairLock(lockName) : locks.getLock(lockName);
      return lock.run(() => method.apply(this, args), { waitTime, leaseTime });
    };
    Object.defineProperty(wrapped, 'name', { value: method.name });
    // Decorators applied before this one (written below it) keep their metadata on the
    // original function: Nest's route, guard and pipe decorators read it from the new one.
    const reflect = Reflect as unknown as { getMetadataKeys?(o: object): unknown[]; getMetadata?(k: unknown, o: object): unknown; defineMetadata?(k: unknown, v: unknown, o: object): void };
    for (const k of reflect.getMetadataKeys?.(method) ?? []) reflect.defineMetadata?.(k, reflect.getMetadata?.(k, method), wrapped);
    descriptor.value = wrapped as typeof descriptor.value;
    return descriptor;
  };
}
