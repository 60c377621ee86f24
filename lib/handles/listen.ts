import type { EventEmitter } from 'eventemitter3';
import type { LockEvents } from '../events.js';
import type { LockPort } from './port.js';

/**
 * A handle's on/once/off: listeners on its name's emitter (made on first use, dropped
 * once unused). Returns `handle`, for chaining.
 */
export function listen<T, E extends keyof LockEvents>(handle: T, port: LockPort, name: string, how: 'on' | 'once' | 'off', event: E, listener: LockEvents[E] | undefined): T {
  if (how === 'off') {
    port.eventsOf(name, false)?.off(event, listener as never);
    port.forgetEvents(name);
  } else (port.eventsOf(name, true) as EventEmitter<LockEvents>)[how](event, listener as never);
  return handle;
}
