import { channel, type Channel } from 'node:diagnostics_channel';
import { EventEmitter } from 'eventemitter3';
import { LockUnavailableError } from '../errors/LockUnavailableError.js';
import type { ClientEvents, LockEvents, LockKind } from '../events.js';
import type { Hold } from './hold.js';
import type { AcquireRequest } from './request.js';

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
  revokeRequested: channel('holdfast:revokeRequested'),
  error: channel('holdfast:error'),
};

/** How a wait that blocked ended (a rejected wait: by what it rejected with). */
export type WaitOutcome = 'acquired' | 'timeout' | 'aborted' | 'unavailable' | 'closed' | 'failed';

/** The outcome of a wait that rejected with `error`; `closed`: its client is closed. */
export function rejectedOutcome(request: AcquireRequest, error: unknown, closed: boolean): WaitOutcome {
  if (request.signal?.aborted) return 'aborted';
  if (error instanceof LockUnavailableError) return 'unavailable';
  return closed ? 'closed' : 'failed';
}

/** Called once when a wait that blocked ends; `error` is what the wait rejected with, if it did. */
export type WaitEnd = (outcome: WaitOutcome, error?: unknown) => void;

/**
 * What instrumentation (holdfast/otel) sees beyond the public events: the moments the
 * events do not tell. Not public API: holdfast/otel is built with this module. Each
 * hook costs nothing while no probe is attached.
 */
export interface Probe {
  /**
   * A wait blocked: its first attempt was refused or failed, or it queued behind local
   * waiters. Called in the caller's async context (a span started here has the
   * caller's parent). `start` is the call's time on the performance.now() clock.
   */
  waitBlocked(name: string, owner: string, kind: LockKind, start: number): WaitEnd | undefined;
  /** A hold began (right after its `acquired` event). `hold` is its identity for holdEnded. */
  holdBegan(hold: object, name: string, kind: LockKind): void;
  /** A hold reached a final state: released, lost, or abandoned (a last unlock that failed, which has no event). */
  holdEnded(hold: object, name: string, kind: LockKind): void;
}

/** Each client's hub, for instrumentation that is handed the client (see hubOf). */
const hubs = new WeakMap<object, EventHub>();

/** The hub of a LockClient, or undefined for anything else (holdfast/otel's way in). */
export function hubOf(client: object): EventHub | undefined {
  return hubs.get(client);
}

/**
 * Where every lock event goes out: the client's emitter (every name), one emitter per
 * name that a handle listens on, and the event's diagnostics channel. Payloads are
 * built only when someone listens (the hot path), and a throwing listener never breaks
 * the bookkeeping that fired it: its error is reported as 'error'.
 */
export class EventHub {
  private readonly perName = new Map<string, EventEmitter<LockEvents>>();
  private readonly probes = new Set<Probe>();
  /** Ends of the blocked waits still under way, while a probe saw them begin. */
  private readonly openWaits = new Map<AcquireRequest, WaitEnd[]>();

  constructor(private readonly client: EventEmitter<ClientEvents>) {
    hubs.set(client, this);
  }

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

  /** Someone listens for or subscribes to event about name: only then is a payload worth building. */
  active(event: keyof LockEvents, name: string): boolean {
    return channels[event].hasSubscribers || this.wants(event, name);
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

  // ---- probes (holdfast/otel) ------------------------------------------------------

  /** A probe is attached: waits are worth following (otherwise they cost nothing extra). */
  get probed(): boolean {
    return this.probes.size > 0;
  }

  /** Attaches a probe; returns its detach. */
  attach(probe: Probe): () => void {
    this.probes.add(probe);
    return () => {
      this.probes.delete(probe);
    };
  }

  /** The request's wait blocked; idempotent (a fair wait says so at each refusal). */
  waitBlocked(request: AcquireRequest): void {
    if (this.probes.size === 0 || this.openWaits.has(request)) return;
    const ends: WaitEnd[] = [];
    const { keys, owner, primitive, start } = request;
    for (const probe of this.probes) {
      const end = this.contain(() => probe.waitBlocked(keys.name, owner, primitive.kind, start));
      if (end) ends.push(end);
    }
    this.openWaits.set(request, ends);
  }

  /** The request's wait ended; called for every wait, blocked or not. */
  waitEnded(request: AcquireRequest, outcome: WaitOutcome, error?: unknown): void {
    if (this.openWaits.size === 0) return;
    const ends = this.openWaits.get(request);
    if (!ends) return;
    this.openWaits.delete(request);
    for (const end of ends) this.contain(() => end(outcome, error));
  }

  holdBegan(hold: Hold): void {
    if (this.probes.size === 0) return;
    for (const probe of this.probes) this.contain(() => probe.holdBegan(hold, hold.keys.name, hold.primitive.kind));
  }

  holdEnded(hold: Hold): void {
    if (this.probes.size === 0) return;
    for (const probe of this.probes) this.contain(() => probe.holdEnded(hold, hold.keys.name, hold.primitive.kind));
  }

  private emit(emitter: EventEmitter<LockEvents> | EventEmitter<ClientEvents>, event: keyof LockEvents, value: unknown): void {
    try {
      (emitter.emit as (e: string, p: unknown) => boolean).call(emitter, event, value);
    } catch (error) {
      this.error(error);
    }
  }

  /** Runs a probe's hook; its throw is reported like a listener's, never into the engine. */
  private contain<T>(hook: () => T): T | undefined {
    try {
      return hook();
    } catch (error) {
      this.error(error);
      return undefined;
    }
  }
}

/** Never silence, never a throw: the string form works whatever realm made e. */
function warn(e: Error): void {
  process.emitWarning(`${e.name}: ${e.message}`, { type: 'HoldfastWarning', detail: e.stack });
}
