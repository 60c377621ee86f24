import type { PublishVerb } from './acquire.js';
import { Script } from './script.js';
import * as sources from './sources.js';

/** What a release script (plain or fair) answers. */
export type ReleaseReply =
  | { kind: 'notHeld' }
  | { kind: 'decremented'; count: number }
  /** receivers: of the wake-up message (plain); waiters left in the queue (fair). */
  | { kind: 'released'; receivers: number }
  | { kind: 'handedOff'; token: number };

const NOT_HELD: ReleaseReply = Object.freeze({ kind: 'notHeld' });

/** Decodes a release reply: {0} not held, {1, count} still held, {2, receivers} released, {3, token} handed off. */
export const decode = (raw: unknown): ReleaseReply => {
  // Indexed in place (Redis sends integers): no array copied per call on the hot path.
  const r = raw as number[];
  switch (r[0]) {
    case 0:
      return NOT_HELD;
    case 1:
      return { kind: 'decremented', count: Number(r[1]) };
    case 3:
      return { kind: 'handedOff', token: Number(r[1]) };
    default:
      return { kind: 'released', receivers: Number(r[1] ?? 0) };
  }
};

/**
 * release.lua: KEYS lock, fence; ARGV owner, channel, publish verb, next owner or '',
 * next lease, '' or own subscriptions (hand off only when no other client waits),
 * levels held before the call, key retention (the fence's TTL when a hand-off mints).
 */
export const release = new Script<
  [owner: string, channel: string, publish: PublishVerb, next: string, nextLease: number, unlessOthersWait: number | '', held: number, retention: number],
  ReleaseReply
>(
  'release',
  sources.release,
  decode,
);

/** fair-release.lua: KEYS lock, queue, deadlines; ARGV owner, channel, publish verb, levels held. */
export const fairRelease = new Script<[owner: string, channel: string, publish: PublishVerb, held: number], ReleaseReply>('fair-release', sources.fairRelease, decode);

/** fair-leave.lua: KEYS lock, queue, deadlines; ARGV owner, channel, publish verb. */
export const fairLeave = new Script<[owner: string, channel: string, publish: PublishVerb], void>('fair-leave', sources.fairLeave, () => undefined);

/** force-unlock.lua: KEYS lock; ARGV channel, publish verb. True when a lock was deleted. */
export const forceUnlock = new Script<[channel: string, publish: PublishVerb], boolean>('force-unlock', sources.forceUnlock, (raw) => Number(raw) === 1);
