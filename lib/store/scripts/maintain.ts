import { Script, ints } from './script.js';
import * as sources from './sources.js';

/** Per key of a renew batch: renewed, held by another owner, or gone. */
export type RenewReply = 'renewed' | 'taken' | 'deleted';

/** Decodes a renewal batch's reply (1 renewed, 2 taken, 0 deleted per hold), for every renewal script. */
export const decodeRenew = (raw: unknown): RenewReply[] => ints(raw).map((r) => (r === 1 ? 'renewed' : r === 2 ? 'taken' : 'deleted'));

/** renew.lua: KEYS the lock hashes of one slot; ARGV owner and lease per key. */
export const renew = new Script<(string | number)[], RenewReply[]>('renew', sources.renew, decodeRenew);

/** set-level.lua: KEYS lock; ARGV owner, level. True when set (the owner holds it). */
export const setLevel = new Script<[owner: string, level: number], boolean>('set-level', sources.setLevel, (raw) => Number(raw) === 1);

/** fence-floor.lua: KEYS fence; ARGV floor, key retention (the fence's TTL). The counter after the call. */
export const fenceFloor = new Script<[floor: number, retention: number], number>('fence-floor', sources.fenceFloor, Number);

/**
 * restore.lua: KEYS lock hashes; ARGV owner, levels, lease per key. Per key: put back
 * (the key was absent) or left alone. Quorum mode sends it as plain EVAL (see quorum/restore.ts).
 */
export const restore = new Script<(string | number)[], boolean[]>('restore', sources.restore, (raw) => ints(raw).map((r) => r === 1));

/** What inspect.lua reads of one lock. */
export interface LockState {
  /** As PTTL: -2 absent, -1 no expiry. */
  pttl: number;
  /** The last token minted for the name, or null when none is known. */
  token: number | null;
  /** Owners waiting in the queue it read (0 in quorum mode: its waiters wait in their clients). */
  queued: number;
  holders: { owner: string; count: number }[];
}

/** inspect.lua: KEYS lock, fence (then the queue, the queue's to send). */
export const inspect = new Script<[], LockState>('inspect', sources.inspect, (raw) => {
  const r = raw as (number | string)[];
  const holders: LockState['holders'] = [];
  for (let i = 3; i + 1 < r.length; i += 2) holders.push({ owner: String(r[i]), count: Number(r[i + 1]) });
  const token = Number(r[1]);
  return { pttl: Number(r[0]), token: token < 0 ? null : token, queued: Number(r[2]), holders };
});
