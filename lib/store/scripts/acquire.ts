import { heldUntil } from '../lease-margin.js';
import type { AcquireResult } from '../types.js';
import { Script, luaConstant } from './script.js';
import * as sources from './sources.js';

/** What an acquire script (quorum's acquire.lua, or queue-acquire.lua) answers. */
export type AcquireReply =
  /** pttl: the lease left of a grant made before this call (it runs from the grant, not from this call's send). */
  | { granted: true; token: number; pttl?: number }
  /**
   * counter: the name's last token minted; head: the caller heads the queue.
   */
  | { granted: false; pttl: number; counter: number; head: boolean };

/** A server's identity and age, as its INFO tells them. */
export interface ServerStart {
  readonly runId: string;
  /** INFO's uptime_in_seconds, in ms: whole seconds, so up to a second more than the server ran. */
  readonly uptime: number;
}

/** acquire.lua's reply: `met` when the client's mark was missing there (see acquire.lua). */
export type QuorumAcquireReply = AcquireReply & { readonly met?: ServerStart };

/**
 * acquire.lua (quorum mode, one of the masters): KEYS lock, fence, the client's mark on
 * the server; ARGV owner, lease, and key retention unless it is the default (each
 * argument costs the client).
 */
export const acquire = new Script<[owner: string, lease: number] | [owner: string, lease: number, retention: number], QuorumAcquireReply>('acquire', sources.acquire, (raw) => {
  const r = raw as (number | string)[];
  const start = (at: number): ServerStart | undefined => (r.length > at ? { runId: String(r[at]), uptime: Number(r[at + 1]) * 1_000 } : undefined);
  if (r[0] === 1) return { granted: true, token: Number(r[1]), met: start(2) };
  return { granted: false, pttl: Number(r[1]), counter: Number(r[2] ?? 0), head: false, met: start(3) };
});

/**
 * The key retention the scripts use when the call leaves it off (RETENTION in
 * _mint.lua, read from the source so the two cannot disagree).
 */
export const SCRIPT_RETENTION = luaConstant(sources.acquire, 'RETENTION');

export type PublishVerb = 'publish' | 'spublish';

/**
 * A grant's client-side deadline: the lease from the send, less the safety margin; a
 * grant made before the call (a release's, taken up by this attempt) counts only what
 * is left of its lease, so the deadline never falls after the key's expiry.
 * Every acquire's reply goes through it (the queue, quorum mode, the read-write lock, the
 * in-memory store of the engine's unit specs).
 */
export function granted(reply: AcquireReply, sentAt: number, lease: number): AcquireResult {
  if (!reply.granted) return { granted: false, pttl: reply.pttl, counter: reply.counter, head: reply.head };
  const left = reply.pttl === undefined || reply.pttl < 0 ? lease : reply.pttl;
  return { granted: true, token: reply.token, validUntil: heldUntil(sentAt, lease, left) };
}
