import { Script } from './script.js';
import * as sources from './sources.js';

/** What an acquire script (plain or fair) answers. */
export type AcquireReply =
  | { granted: true; token: number }
  /**
   * counter: the fencing counter (plain); head: the caller heads the queue (fair) or the
   * waiting list (plain); turnIn: ms until the free lock is the head's alone (plain, -1
   * when the caller is not the head).
   */
  | { granted: false; pttl: number; counter: number; head: boolean; turnIn: number };

/**
 * acquire.lua: KEYS lock, fence, waiting list, its deadlines; ARGV owner, lease, key
 * retention (the fence's TTL), client id on the waiting list ('' none), join when
 * publish verb, then '1' to join the list when refused (absent: not). The channel is the
 * lock key's + ':ch'; turn and entry lease are fixed in _waiting.lua. Arguments are few:
 * each costs the client on every call.
 */
export const acquire = new Script<
  [owner: string, lease: number, retention: number, waiter: string, publish: PublishVerb, ...join: ['1'] | []],
  AcquireReply
>('acquire', sources.acquire, (raw) => {
  const r = raw as number[];
  if (r[0] === 1) return { granted: true, token: Number(r[1]) };
  const turnIn = Number(r[3] ?? -1);
  return { granted: false, pttl: Number(r[1]), counter: Number(r[2] ?? 0), head: turnIn >= 0, turnIn };
});

/** fair-acquire.lua: KEYS lock, fence, queue, deadlines; ARGV owner, lease, heartbeat, enqueue, channel, publish verb, key retention. */
export const fairAcquire = new Script<
  [owner: string, lease: number, heartbeat: number, enqueue: '1' | '0', channel: string, publish: PublishVerb, retention: number],
  AcquireReply
>(
  'fair-acquire',
  sources.fairAcquire,
  (raw) => {
    const r = raw as number[];
    return r[0] === 1 ? { granted: true, token: Number(r[1]) } : { granted: false, pttl: Number(r[1]), counter: 0, head: r[2] === 1, turnIn: -1 };
  },
);

export type PublishVerb = 'publish' | 'spublish';
