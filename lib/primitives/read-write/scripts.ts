import type { AcquireReply, PublishVerb } from '../../store/scripts/acquire.js';
import { decodeRenew, type RenewReply } from '../../store/scripts/maintain.js';
import { decode as decodeRelease, type ReleaseReply } from '../../store/scripts/release.js';
import { Script } from '../../store/scripts/script.js';
import * as sources from './sources.js';

/** Which side of a read-write lock a call is about. */
export type Side = 'r' | 'w';

/**
 * rw-acquire.lua: KEYS W, R, E, fence, queue, deadlines, tickets; ARGV owner, side,
 * lease, heartbeat, wait id ('' for one attempt), read channel, write channel, publish
 * verb, key retention. Refused, `counter` is the name's last grant's stamp (_rwqueue.lua):
 * it dates the refusal for a grant that comes in a message (engine/waits.ts).
 */
export const acquire = new Script<
  [owner: string, side: Side, lease: number, heartbeat: number, wait: string, readChannel: string, writeChannel: string, publish: PublishVerb, retention: number],
  AcquireReply
>('rw-acquire', sources.rwAcquire, (raw) => {
  const r = raw as number[];
  if (r[0] === 1) return r[2] === undefined ? { granted: true, token: Number(r[1]) } : { granted: true, token: Number(r[1]), pttl: Number(r[2]) };
  return { granted: false, pttl: Number(r[1]), counter: Number(r[3] ?? 0), head: r[2] === 1 };
});

/** rw-release.lua: KEYS as rw-acquire's; ARGV owner, side, levels held, read channel, write channel, publish verb, key retention. */
export const release = new Script<[owner: string, side: Side, held: number, readChannel: string, writeChannel: string, publish: PublishVerb, retention: number], ReleaseReply>(
  'rw-release',
  sources.rwRelease,
  (raw) => {
    const r = raw as unknown[];
    return r[0] === 2 ? { kind: 'released', granted: r.slice(1).map(String) } : decodeRelease(raw);
  },
);

/** rw-leave.lua: KEYS as rw-acquire's; ARGV owner, side, wait id, read channel, write channel, publish verb, key retention. */
export const leave = new Script<[owner: string, side: Side, wait: string, readChannel: string, writeChannel: string, publish: PublishVerb, retention: number], void>(
  'rw-leave',
  sources.rwLeave,
  () => undefined,
);

/** rw-renew.lua: KEYS R, E, W per read hold; ARGV owner and lease per hold. */
export const renewRead = new Script<(string | number)[], RenewReply[]>('rw-renew', sources.rwRenew, decodeRenew);

/** rw-force-unlock.lua: KEYS W, R, E, Q; ARGV side, read channel, write channel, publish verb, holder channel prefix, hold id. True when a hold was deleted. */
export const forceUnlock = new Script<[side: Side, readChannel: string, writeChannel: string, publish: PublishVerb, holders: string, id: string], boolean>(
  'rw-force-unlock',
  sources.rwForceUnlock,
  (raw) => Number(raw) === 1,
);

/** rw-request-release.lua: KEYS W, R, E; ARGV side, holder channel prefix, hold id. The owners asked. */
export const requestRelease = new Script<[side: Side, holders: string, id: string], string[]>('rw-request-release', sources.rwRequestRelease, (raw) => (raw as unknown[]).map(String));
