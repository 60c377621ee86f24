import type { Hold } from '../../engine/hold.js';
import { LockLostError } from '../../errors/LockLostError.js';
import { LockTimeoutError } from '../../errors/LockTimeoutError.js';
import type { LockEvents } from '../../events.js';
import { describe } from '../../options.js';
import type { Semaphores } from './semaphore.js';
import { NameKeys } from '../../store/name-keys.js';
import type { LockKeys } from '../../store/types.js';
import { listen } from '../../handles/listen.js';
import type { LockPort } from '../../handles/port.js';
import { resolvePermitOptions, type ResolvedPermit } from './args.js';

export { checkLimit } from './args.js';
import type { Permit, PermitContext, PermitOptions, Semaphore, SemaphoreInfo } from './types.js';
import { ownerOrigin } from '../../handles/owner-id.js';

/**
 * The semaphore's keys: the lock keys of the name with ':sem' after the hash tag, so a
 * lock and a semaphore of one name never share a key, and all stay in one slot. The
 * fence is never written (permits carry no token).
 */
function semaphoreKeys(port: LockPort, name: string): LockKeys {
  return new NameKeys(name, `${port.keysOf(name).key}:sem`);
}

/** The Semaphore API over one name, through the client's port: each acquisition is a hold of its own. */
export class SemaphoreHandle implements Semaphore {
  private readonly keys: LockKeys;

  constructor(
    private readonly port: LockPort,
    readonly name: string,
    readonly limit: number,
    private readonly semaphores: Semaphores,
  ) {
    this.keys = semaphoreKeys(port, name);
  }

  async acquire(options?: PermitOptions): Promise<Permit> {
    const o = resolvePermitOptions(options, 'acquire() options', this.limit, undefined);
    const hold = await this.take(o);
    if (!hold) throw new LockTimeoutError(this.name, o.waitTime ?? 0);
    return this.permit(hold, o.permits);
  }

  async tryAcquire(options?: PermitOptions): Promise<Permit | null> {
    const o = resolvePermitOptions(options, 'tryAcquire() options', this.limit, 0);
    const hold = await this.take(o);
    return hold && this.permit(hold, o.permits);
  }

  async run<T>(fn: (context: PermitContext) => T | Promise<T>, options?: PermitOptions): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError(`run(fn): fn must be a function, got ${describe(fn)}`);
    const o = resolvePermitOptions(options, 'run() options', this.limit, undefined);
    const hold = await this.take(o);
    if (!hold) throw new LockTimeoutError(this.name, o.waitTime ?? 0);
    let result: T;
    try {
      result = await fn({ signal: hold.signal, id: hold.owner, permits: o.permits, name: this.name });
    } catch (error) {
      await this.port.release(hold).catch((releaseError: unknown) => {
        if (releaseError instanceof LockLostError && error instanceof Error && error.cause === undefined) error.cause = releaseError;
      });
      throw error;
    }
    await this.port.release(hold);
    return result;
  }

  async availablePermits(): Promise<number> {
    this.port.assertOpen();
    const held = await this.port.query(this.keys, (n) => `count the permits held of ${n}`, (timeout) => this.semaphores.store.held(this.keys, this.limit, timeout));
    return this.limit - held;
  }

  async requestRelease(): Promise<number> {
    this.port.assertOpen();
    return this.port.requestRelease(this.keys, this.semaphores.kind(this.limit, 1));
  }

  async forceRelease(): Promise<boolean> {
    this.port.assertOpen();
    return this.port.forceUnlock(this.keys, this.semaphores.kind(this.limit, 1));
  }

  async inspect(): Promise<SemaphoreInfo> {
    this.port.assertOpen();
    const state = await this.port.query(this.keys, (n) => `inspect ${n}`, (timeout) => this.semaphores.store.inspect(this.keys, timeout));
    const holders = state.permits.map(({ id, permits, ttl }) => ({ id, ...ownerOrigin(id), permits, ttl }));
    return { name: this.name, limit: state.limit, used: holders.reduce((sum, h) => sum + h.permits, 0), holders, waiters: state.queued };
  }

  on<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this {
    return listen(this, this.port, this.name, 'on', event, listener);
  }

  once<E extends keyof LockEvents>(event: E, listener: LockEvents[E]): this {
    return listen(this, this.port, this.name, 'once', event, listener);
  }

  off<E extends keyof LockEvents>(event: E, listener?: LockEvents[E]): this {
    return listen(this, this.port, this.name, 'off', event, listener);
  }

  /** A new owner per acquisition: its id is the permit's id in Redis, used once. */
  private take(o: ResolvedPermit): Promise<Hold | null> {
    this.port.assertOpen();
    return this.port.acquire(this.semaphores.kind(this.limit, o.permits), this.keys, this.port.unscopedOwner(), o.leaseTime, o.waitTime, o.signal);
  }

  private permit(hold: Hold, permits: number): Permit {
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await this.port.release(hold);
    };
    return { id: hold.owner, permits, name: this.name, signal: hold.signal, release, [Symbol.asyncDispose]: release };
  }
}
