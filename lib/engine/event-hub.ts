import { channel, type Channel } from 'node:diagnostics_channel';
import { EventEmitter } from 'eventemitter3';
import type { ClientEvents, LockEvents } from '../events.js';

/**
 * The diagnostics channel of each event, `holdfast:<event>`: process-wide, for every
 * client. Made once here, so that publishing costs one `hasSubscribers` read while
 * nobody subscribes (and this module's references keep each channel alive).
 */
const channels: { readonly [E in keyof ClientEvents]: Channel } = {
  acquired: channel('holdfast:acquired'),
  released: channel('holdfast:released'),
  renewed: channel('holdfast:renewed'),
  renewalFailed: channel('holdfast:renewalFailed'),
  acquireFailed: channel('holdfast:acquireFailed'),
  lost: channel('holdfast:lost'),
  error: channel('holdfast:error'),
};

/**
 * Where every lock event goes out: the client's emitter (every name), one emitter per
 * name that a handle listens on, and the event's diagnostics channel. Payloads are
 * built only when someone listens (the hot path), and a throwing listener never breaks
 * the bookkeeping that fired it: its error is reported as 'error'.
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

  /** Builds the payload only when someone listens or subscribes. */
  publish<E extends keyof LockEvents>(event: E, name: string, payload: () => Parameters<LockEvents[E]>[0]): void {
    const channel = channels[event];
    const listened = this.wants(event, name);
    if (!listened && !channel.hasSubscribers) return;
    const value = payload();
    // A subscriber that throws is Node's business: diagnostics_channel reports it as an
    // uncaught exception, as it does for every channel.
    if (channel.hasSubscribers) channel.publish(value);
    if (!listened) return;
    // Each emitter on its own: a listener that throws on the client's emitter does not
    // keep the event from the handle's listeners.
    this.emit(this.client, event, value);
    const named = this.perName.get(name);
    if (named) this.emit(named, event, value);
  }

  /** Background trouble with no caller to reject: 'error', or a process warning when nobody listens. */
  error(error: unknown): void {
    const e = error instanceof Error ? error : new Error(String(error));
    if (channels.error.hasSubscribers) channels.error.publish(e);
    if (this.client.listenerCount('error') > 0) {
      try {
        this.client.emit('error', e);
        return;
      } catch (thrown) {
        // The 'error' listener itself threw: there is nobody left to tell but the process.
        warn(thrown instanceof Error ? thrown : new Error(String(thrown)));
      }
    }
    warn(e);
  }

  private emit(emitter: EventEmitter<LockEvents> | EventEmitter<ClientEvents>, event: keyof LockEvents, value: unknown): void {
    try {
      (emitter.emit as (e: string, p: unknown) => boolean).call(emitter, event, value);
    } catch (error) {
      this.error(error);
    }
  }
}

/** Never silence, never a throw: the string form works whatever realm made e. */
function warn(e: Error): void {
  process.emitWarning(`${e.name}: ${e.message}`, { type: 'HoldfastWarning', detail: e.stack });
}
