import { Script, luaConstant } from './script.js';
import * as sources from './sources.js';

/** What an acquire script (quorum's acquire.lua, or queue-acquire.lua) answers. */
export type AcquireReply =
  /** pttl: the lease left of a grant made before this call (it runs from the grant, not from this call's send). */
  | { granted: true; token: number; pttl?: number }
  /**
   * counter: the name's last token minted; head: the caller heads the queue;
   * windowLeft: ms until the head's barging window ends (0: none runs).
   */
  | { granted: false; pttl: number; counter: number; head: boolean; windowLeft: number };

/**
 * acquire.lua (quorum mode, one of the masters): KEYS lock, fence; ARGV owner, lease,
 * and key retention unless it is the default (each argument costs the client).
 */
export const acquire = new Script<[owner: string, lease: number] | [owner: string, lease: number, retention: number], AcquireReply>('acquire', sources.acquire, (raw) => {
  const r = raw as number[];
  if (r[0] === 1) return { granted: true, token: Number(r[1]) };
  return { granted: false, pttl: Number(r[1]), counter: Number(r[2] ?? 0), head: false, windowLeft: 0 };
});

/**
 * The key retention the scripts use when the call leaves it off (RETENTION in
 * _mint.lua, read from the source so the two cannot disagree).
 */
export const SCRIPT_RETENTION = luaConstant(sources.acquire, 'RETENTION');

/** queue-acquire.lua: KEYS lock, fence, queue, deadlines, tickets; ARGV from queueAcquireArgs(). */
export const queueAcquire = new Script<(string | number)[], AcquireReply>('queue-acquire', sources.queueAcquire, (raw) => {
  const r = raw as number[];
  if (r[0] === 1) return r[2] === undefined ? { granted: true, token: Number(r[1]) } : { granted: true, token: Number(r[1]), pttl: Number(r[2]) };
  return { granted: false, pttl: Number(r[1]), head: r[2] === 1, counter: Number(r[3] ?? 0), windowLeft: Number(r[4] ?? 0) };
});

/** A waiter's heartbeat lease the queue scripts use when the call leaves it off (HEARTBEAT in _queue.lua). */
export const SCRIPT_HEARTBEAT = luaConstant(sources.queueAcquire, 'HEARTBEAT');

/**
 * queue-acquire.lua's ARGV with trailing defaults left off (each argument costs the
 * client; an uncontended lock() of the plain lock sends four). `wait`: the wait's id, ''
 * for one attempt; `grants`: false to have the head woken rather than granted.
 */
export function queueAcquireArgs(owner: string, lease: number, wait: string, window: number, heartbeat: number, retention: number, publish: PublishVerb, grants: boolean): (string | number)[] {
  const args: (string | number)[] = [owner, lease, wait, window, heartbeat, retention, publish, grants ? '1' : '0'];
  const defaults: (string | number)[] = ['', '', 0, SCRIPT_HEARTBEAT, SCRIPT_RETENTION, 'publish', '1'];
  let n = args.length;
  while (n > 2 && args[n - 1] === defaults[n - 2]) n -= 1;
  return n === args.length ? args : args.slice(0, n);
}

export type PublishVerb = 'publish' | 'spublish';
