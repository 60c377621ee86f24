import { EventEmitter } from 'eventemitter3';
import type { ClientEvents, LockEvents } from '../events.js';

/**
 * Where every lock event goes out: the client's emitter (every name) and one emitter
 * per name that a handle listens on. Payloads are built only when someone listens
 * (the hot path), and a throwing listener never breaks the bookkeeping that fired it:
 * its error is reported as 'error'.
 */
export class EventHub {
  private readonly perName = new Map<string, EventEmitter<LockEvents>>();

  constructor(private readonly client: EventEmitter<ClientEvents>) {}

  /** The emitter of one name; created when `create`, for a handle's on()/once(). */
  of(name: string, create: true): EventEmitter<LockEvents>;
  of(name: string, create: false): EventEmitter<LockEvents> | undefined;
  of(name: string, create: boolean): EventEmitter<LockEvents> | undefined {
    let emitter = this.perName.get(name);
    if (!emitter && create) {
      emitter = new EventEmitter<LockEvents>();
      this.perName.set(name, emitter);
    }
    return emitter;
  }

  /** Drops a name's emitter once nobody listens to it (no growth with names used once). */
  forget(name: string): void {
    const emitter = this.perName.get(name);
    if (emitter && emitter.eventNames().length === 0) this.perName.delete(name);
  }

  wants(event: keyof LockEvents, name: string): boolean {
    return this.client.listenerCount(event) > 0 || (this.perName.get(name)?.listenerCount(event) ?? 0) > 0;
  }

  /** Builds the payload only when someone listens. */
  publish<E extends keyof LockEvents>(event: E, name: string, payload: () => Parameters<LockEvents[E]>[0]): void {
    if (!this.wants(event, name)) return;
    const value = payload();
    try {
      (this.client.emit as (e: string, p: unknown) => boolean).call(this.client, event, value);
      const named = this.perName.get(name);
      if (named) (named.emit as (e: string, p: unknown) => boolean).call(named, event, value);
    } catch (error) {
      this.error(error);
    }
  }

  /** Background trouble with no caller to reject: 'error', or a process warning when nobody listens. */
  error(error: unknown): void {
    const e = error instanceof Error ? error : new Error(String(error));
    if (this.client.listenerCount('error') > 0) this.client.emit('error', e);
    // Never silence, never a throw: the string form works whatever realm made e.
    else process.emitWarning(`${e.name}: ${e.message}`, { type: 'HoldfastWarning', detail: e.stack });
  }
}
