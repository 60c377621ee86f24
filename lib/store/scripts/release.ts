import { SCRIPT_RETENTION, type PublishVerb } from './acquire.js';
import { Script } from './script.js';
import * as sources from './sources.js';

/** What a release script (quorum's release.lua, or queue-release.lua) answers. */
export type ReleaseReply =
  | { kind: 'notHeld' }
  | { kind: 'decremented'; count: number }
  /**
   * receivers: of the 'released' message (quorum); waiters left in the queue (queue).
   * granted: the messages of the grants the release made to waiters at the head of the
   * queue ('owner wait token'): the lock's head, or the semaphore's waiters that fit.
   */
  | { kind: 'released'; receivers: number; granted?: readonly string[] };

const NOT_HELD: ReleaseReply = Object.freeze({ kind: 'notHeld' });

/** Decodes a release reply: {0} not held, {1, count} still held, {2, receivers} released. */
export const decode = (raw: unknown): ReleaseReply => {
  // Indexed in place (Redis sends integers): no array copied per call on the hot path.
  const r = raw as number[];
  switch (r[0]) {
    case 0:
      return NOT_HELD;
    case 1:
      return { kind: 'decremented', count: Number(r[1]) };
    default:
      return { kind: 'released', receivers: Number(r[1] ?? 0) };
  }
};

/** release.lua (quorum mode, one of the masters): KEYS lock; ARGV owner, levels held, publish verb (trailing defaults left off). */
export const release = new Script<[owner: string] | [owner: string, held: number] | [owner: string, held: number, publish: PublishVerb], ReleaseReply>('release', sources.release, decode);

/** release.lua's arguments with trailing defaults left off: each argument costs the client. */
export function releaseArgs(owner: string, held: number, publish: PublishVerb): [owner: string] | [owner: string, held: number] | [owner: string, held: number, publish: PublishVerb] {
  if (publish !== 'publish') return [owner, held, publish];
  return held === 1 ? [owner] : [owner, held];
}

/** queue-release.lua: KEYS lock, queue, deadlines, fence, tickets; ARGV from queueReleaseArgs(). */
export const queueRelease = new Script<(string | number)[], ReleaseReply>('queue-release', sources.queueRelease, (raw) => {
  const r = raw as unknown[];
  return r[0] === 2 ? { kind: 'released', receivers: Number(r[1] ?? 0), granted: r[2] === undefined || r[2] === null ? undefined : [String(r[2])] } : decode(raw);
});

/** queue-release.lua's ARGV with trailing defaults left off (see queueAcquireArgs). */
export function queueReleaseArgs(owner: string, held: number, window: number, retention: number, publish: PublishVerb, grants: boolean): (string | number)[] {
  const args: (string | number)[] = [owner, held, window, retention, publish, grants ? '1' : '0'];
  const defaults: (string | number)[] = [1, 0, SCRIPT_RETENTION, 'publish', '1'];
  let n = args.length;
  while (n > 1 && args[n - 1] === defaults[n - 2]) n -= 1;
  return n === args.length ? args : args.slice(0, n);
}

/** queue-leave.lua: KEYS lock, queue, deadlines, tickets; ARGV owner, wait id, barging window, publish verb. */
export const queueLeave = new Script<[owner: string, wait: string, window: number, publish: PublishVerb], void>('queue-leave', sources.queueLeave, () => undefined);

/** force-unlock.lua: KEYS lock; ARGV channel, publish verb. True when a lock was deleted. */
export const forceUnlock = new Script<[channel: string, publish: PublishVerb], boolean>('force-unlock', sources.forceUnlock, (raw) => Number(raw) === 1);
