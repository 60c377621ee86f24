import { Script, luaConstant } from './script.js';
import * as sources from './sources.js';

/** What an acquire script (plain or fair) answers. */
export type AcquireReply =
  /** pttl: the lease left of a grant made before this call (it runs from the grant, not from this call's send). */
  | { granted: true; token: number; pttl?: number }
  /**
   * counter: the fencing counter (plain and fair: the last token minted); head: the caller heads the queue (fair) or the
   * waiting list (plain); turnIn: ms until the free lock is the head's alone (plain, -1
   * when the caller is not the head).
   */
  | { granted: false; pttl: number; counter: number; head: boolean; turnIn: number };

/**
 * acquire.lua: KEYS lock, fence, and with a waiting list its two keys; ARGV owner,
 * lease, then what acquireArgs() leaves off at its default: client id on the waiting
 * list, '1' to join the list when refused, key retention (the fence's TTL), publish
 * verb. The channel is the lock key's + ':ch'; turn and entry lease are fixed in
 * _waiting.lua.
 */
export const acquire = new Script<AcquireArgs, AcquireReply>('acquire', sources.acquire, (raw) => {
  const r = raw as number[];
  if (r[0] === 1) return { granted: true, token: Number(r[1]) };
  const turnIn = Number(r[3] ?? -1);
  return { granted: false, pttl: Number(r[1]), counter: Number(r[2] ?? 0), head: turnIn >= 0, turnIn };
});

/** acquire.lua's ARGV, each default left off from the end (acquireArgs). */
type AcquireArgs =
  | [owner: string, lease: number]
  | [owner: string, lease: number, waiter: string]
  | [owner: string, lease: number, waiter: string, join: '1' | '']
  | [owner: string, lease: number, waiter: string, join: '1' | '', retention: number]
  | [owner: string, lease: number, waiter: string, join: '1' | '', retention: number, publish: PublishVerb];

/**
 * The key retention the scripts use when the call leaves it off (RETENTION in
 * _mint.lua, read from the source so the two cannot disagree).
 */
export const SCRIPT_RETENTION = luaConstant(sources.acquire, 'RETENTION');

/**
 * acquire.lua's arguments with trailing defaults left off: each argument costs the
 * client more (ioredis builds and writes it) than a command inside the script, and the
 * common calls need few (quorum mode: owner and lease).
 * `waiter`: the caller's id on the waiting list, '' without one (then no list keys).
 */
export function acquireArgs(owner: string, lease: number, waiter: string, retention: number, publish: PublishVerb, join: boolean): AcquireArgs {
  const joins = join ? '1' : '';
  if (publish !== 'publish') return [owner, lease, waiter, joins, retention, publish];
  if (retention !== SCRIPT_RETENTION) return [owner, lease, waiter, joins, retention];
  if (join) return [owner, lease, waiter, '1'];
  return waiter === '' ? [owner, lease] : [owner, lease, waiter];
}

/** fair-acquire.lua: KEYS lock, fence, queue, deadlines, tickets; ARGV owner, lease, heartbeat, enqueue, channel, publish verb, key retention, wait id. */
export const fairAcquire = new Script<
  [owner: string, lease: number, heartbeat: number, enqueue: '1' | '0', channel: string, publish: PublishVerb, retention: number, wait: string],
  AcquireReply
>(
  'fair-acquire',
  sources.fairAcquire,
  (raw) => {
    const r = raw as number[];
    if (r[0] === 1) return r[2] === undefined ? { granted: true, token: Number(r[1]) } : { granted: true, token: Number(r[1]), pttl: Number(r[2]) };
    return { granted: false, pttl: Number(r[1]), counter: Number(r[3] ?? 0), head: r[2] === 1, turnIn: -1 };
  },
);

export type PublishVerb = 'publish' | 'spublish';
