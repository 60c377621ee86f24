import { Script } from './script.js';
import * as sources from './sources.js';

/** What an acquire script (plain or fair) answers. */
export type AcquireReply =
  | { granted: true; token: number }
  /** counter: the fencing counter (plain); head: the caller heads the queue (fair). */
  | { granted: false; pttl: number; counter: number; head: boolean };

/** acquire.lua: KEYS lock, fence; ARGV owner, lease, key retention (the fence's TTL). */
export const acquire = new Script<[owner: string, lease: number, retention: number], AcquireReply>('acquire', sources.acquire, (raw) => {
  const r = raw as number[];
  return r[0] === 1 ? { granted: true, token: Number(r[1]) } : { granted: false, pttl: Number(r[1]), counter: Number(r[2] ?? 0), head: false };
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
    return r[0] === 1 ? { granted: true, token: Number(r[1]) } : { granted: false, pttl: Number(r[1]), counter: 0, head: r[2] === 1 };
  },
);

export type PublishVerb = 'publish' | 'spublish';
