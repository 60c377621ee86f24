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

export type PublishVerb = 'publish' | 'spublish';
