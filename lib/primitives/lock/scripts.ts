import { SCRIPT_RETENTION, type AcquireReply, type PublishVerb } from '../../store/scripts/acquire.js';
import { decode, type ReleaseReply } from '../../store/scripts/release.js';
import { Script, luaConstant } from '../../store/scripts/script.js';
import * as sources from './sources.js';

// The queue of the lock and the fair lock (queue-*.lua; the queue itself is the shared
// prelude lib/store/scripts/_queue.lua) beside their typed callers.

/** queue-acquire.lua: KEYS lock, fence, queue, deadlines, tickets; ARGV from queueAcquireArgs(). */
export const queueAcquire = new Script<(string | number)[], AcquireReply>('queue-acquire', sources.queueAcquire, (raw) => {
  const r = raw as number[];
  if (r[0] === 1) return r[2] === undefined ? { granted: true, token: Number(r[1]) } : { granted: true, token: Number(r[1]), pttl: Number(r[2]) };
  return { granted: false, pttl: Number(r[1]), head: r[2] === 1, counter: Number(r[3] ?? 0) };
});

/** A waiter's heartbeat lease the queue scripts use when the call leaves it off (HEARTBEAT in _queue.lua). */
export const SCRIPT_HEARTBEAT = luaConstant(sources.queueAcquire, 'HEARTBEAT');

/**
 * queue-acquire.lua's ARGV with trailing defaults left off (each argument costs the
 * client; an uncontended lock() sends two). `wait`: the wait's id, '' for one
 * attempt; `grants`: false to have the head woken rather than granted.
 */
export function queueAcquireArgs(owner: string, lease: number, wait: string, heartbeat: number, retention: number, publish: PublishVerb, grants: boolean): (string | number)[] {
  return withoutDefaults([owner, lease, wait, heartbeat, retention, publish, grants ? '1' : '0'], [undefined, undefined, '', SCRIPT_HEARTBEAT, SCRIPT_RETENTION, 'publish', '1']);
}

/**
 * `args` without its trailing arguments that equal the script's defaults (`defaults[i]`
 * for `args[i]`; undefined: always sent).
 */
function withoutDefaults(args: (string | number)[], defaults: readonly (string | number | undefined)[]): (string | number)[] {
  let n = args.length;
  while (n > 0 && defaults[n - 1] !== undefined && args[n - 1] === defaults[n - 1]) n -= 1;
  return n === args.length ? args : args.slice(0, n);
}

/** queue-release.lua: KEYS lock, queue, deadlines, fence, tickets; ARGV from queueReleaseArgs(). */
export const queueRelease = new Script<(string | number)[], ReleaseReply>('queue-release', sources.queueRelease, (raw) => {
  const r = raw as unknown[];
  return r[0] === 2 && r[1] !== undefined && r[1] !== null ? { kind: 'released', granted: [String(r[1])] } : decode(raw);
});

/** queue-release.lua's ARGV with trailing defaults left off (see queueAcquireArgs). */
export function queueReleaseArgs(owner: string, held: number, retention: number, publish: PublishVerb, grants: boolean): (string | number)[] {
  return withoutDefaults([owner, held, retention, publish, grants ? '1' : '0'], [undefined, 1, SCRIPT_RETENTION, 'publish', '1']);
}

/** queue-leave.lua: KEYS lock, queue, deadlines, tickets; ARGV owner, wait id, publish verb. */
export const queueLeave = new Script<[owner: string, wait: string, publish: PublishVerb], void>('queue-leave', sources.queueLeave, () => undefined);
