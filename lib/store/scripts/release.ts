import { SCRIPT_RETENTION, type PublishVerb } from './acquire.js';
import { Script } from './script.js';
import * as sources from './sources.js';

/** What a release script (quorum's release.lua, or queue-release.lua) answers. */
export type ReleaseReply =
  | { kind: 'notHeld' }
  | { kind: 'decremented'; count: number }
  /**
   * granted: the messages of the grants the release made to waiters at the head of the
   * queue ('owner wait token'): the lock's head, or the semaphore's waiters that fit.
   * brokeAt: not a reply of the script's but ExactlyOnce's reading of one (rule 5): a
   * last release answered "not held" after a reconnect, sent after the connection last
   * broke at this monotonic time. A hold Redis has not confirmed since then may have been
   * lost at that break (a restart that emptied Redis) rather than released by a first run.
   */
  | { kind: 'released'; granted?: readonly string[]; brokeAt?: number };

const NOT_HELD: ReleaseReply = Object.freeze({ kind: 'notHeld' });
const RELEASED: ReleaseReply = Object.freeze({ kind: 'released' });

/** Decodes a release reply: {0} not held, {1, count} still held, {2} released. */
export const decode = (raw: unknown): ReleaseReply => {
  // Indexed in place (Redis sends integers): no array copied per call on the hot path.
  const r = raw as number[];
  switch (r[0]) {
    case 0:
      return NOT_HELD;
    case 1:
      return { kind: 'decremented', count: Number(r[1]) };
    default:
      return RELEASED;
  }
};

/** release.lua (quorum mode, one of the masters): KEYS lock; ARGV owner, levels held, publish verb (trailing defaults left off). */
export const release = new Script<[owner: string] | [owner: string, held: number] | [owner: string, held: number, publish: PublishVerb], ReleaseReply>('release', sources.release, decode);

/** release.lua's arguments with trailing defaults left off: each argument costs the client. */
export function releaseArgs(owner: string, held: number, publish: PublishVerb): [owner: string] | [owner: string, held: number] | [owner: string, held: number, publish: PublishVerb] {
  if (publish !== 'publish') return [owner, held, publish];
  return held === 1 ? [owner] : [owner, held];
}

/**
 * Where a client's holds hear requestRelease and forceUnlock (scripts/_holders.lua): this,
 * then the client part of its owner ids (`host:pid:clientId:`).
 */
export const HOLDER_CHANNEL = 'holdfast:holders:';

/** force-unlock.lua: KEYS lock (then its queue, the queue's to send); ARGV channel, publish verb, holder channel prefix, hold id (then the queue's wake-up channel). True when a lock was deleted. */
export const forceUnlock = new Script<[channel: string, publish: PublishVerb, holders: string, id: string] | [channel: string, publish: PublishVerb, holders: string, id: string, wakeChannel: string], boolean>('force-unlock', sources.forceUnlock, (raw) => Number(raw) === 1);

/** request-release.lua: KEYS lock; ARGV holder channel prefix, hold id. The owners asked. */
export const requestRelease = new Script<[holders: string, id: string], string[]>('request-release', sources.requestRelease, (raw) => (raw as unknown[]).map(String));
