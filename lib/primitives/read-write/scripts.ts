import type { AcquireReply, PublishVerb } from '../../store/scripts/acquire.js';
import { decodeRenew, type RenewReply } from '../../store/scripts/maintain.js';
import { decode as decodeRelease, type ReleaseReply } from '../../store/scripts/release.js';
import { Script } from '../../store/scripts/script.js';
import * as sources from './sources.js';

/** Which side of a read-write lock a call is about. */
export type Side = 'r' | 'w';

/**
 * rw-acquire.lua: KEYS W, R, E, fence, Q, D; ARGV owner, side, lease, heartbeat,
 * enqueue, read channel, write channel, publish verb, key retention.
 */
export const acquire = new Script<
  [owner: string, side: Side, lease: number, heartbeat: number, enqueue: '1' | '0', readChannel: string, writeChannel: string, publish: PublishVerb, retention: number],
  AcquireReply
>('rw-acquire', sources.rwAcquire, (raw) => {
  const r = raw as number[];
  return r[0] === 1 ? { granted: true, token: Number(r[1]) } : { granted: false, pttl: Number(r[1]), counter: 0, head: r[2] === 1, windowLeft: 0 };
});

/** rw-release.lua: KEYS W, R, E, Q, D; ARGV owner, side, levels held, read channel, write channel, publish verb. */
export const release = new Script<[owner: string, side: Side, held: number, readChannel: string, writeChannel: string, publish: PublishVerb], ReleaseReply>(
  'rw-release',
  sources.rwRelease,
  decodeRelease,
);

/** rw-leave.lua: KEYS Q, D; ARGV entry, read channel, write channel, publish verb. */
export const leave = new Script<[entry: string, readChannel: string, writeChannel: string, publish: PublishVerb], void>('rw-leave', sources.rwLeave, () => undefined);

/** rw-renew.lua: KEYS R, E, W per read hold; ARGV owner and lease per hold. */
export const renewRead = new Script<(string | number)[], RenewReply[]>('rw-renew', sources.rwRenew, decodeRenew);

/** rw-force-unlock.lua: KEYS W, R, E, Q; ARGV side, read channel, write channel, publish verb. True when a hold was deleted. */
export const forceUnlock = new Script<[side: Side, readChannel: string, writeChannel: string, publish: PublishVerb], boolean>(
  'rw-force-unlock',
  sources.rwForceUnlock,
  (raw) => Number(raw) === 1,
);
