import { SCRIPT_RETENTION, type PublishVerb } from './acquire.js';
import { Script } from './script.js';
import * as sources from './sources.js';

/** What a release script (plain or fair) answers. */
export type ReleaseReply =
  | { kind: 'notHeld' }
  | { kind: 'decremented'; count: number }
  /**
   * receivers: of the wake-up message (plain); waiters left in the queue (fair).
   * deferred: nobody was woken, a waiting client's turn is still to come (plain).
   * granted: the fair queue's head was granted the lock, as its message says ('owner wait token').
   */
  | { kind: 'released'; receivers: number; deferred?: boolean; granted?: string }
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
      return { kind: 'released', receivers: Number(r[1] ?? 0), deferred: r[2] === 1 };
  }
};

/**
 * release.lua: KEYS lock, and with a waiting list its two keys; ARGV owner, then what
 * releaseArgs() leaves off at its default: the client's id on the waiting list ('' for
 * none: every waiter is woken), levels held before the call, publish verb, '1' to wake
 * the list's head though its turn has not come. The channel
 * is the lock key's + ':ch'; turn and entry lease are fixed in _waiting.lua.
 */
export const release = new Script<ReleaseArgs, ReleaseReply>('release', sources.release, decode);

/** release.lua's ARGV, each default left off from the end (releaseArgs). */
type ReleaseArgs =
  | [owner: string]
  | [owner: string, waiter: string]
  | [owner: string, waiter: string, held: number]
  | [owner: string, waiter: string, held: number, publish: PublishVerb]
  | [owner: string, waiter: string, held: number, publish: PublishVerb, wakeHead: '1'];

/** release.lua's arguments with trailing defaults left off (see acquireArgs). */
export function releaseArgs(owner: string, waiter: string, held: number, publish: PublishVerb, wakeHead = false): ReleaseArgs {
  if (wakeHead && waiter !== '') return [owner, waiter, held, publish, '1'];
  if (publish !== 'publish') return [owner, waiter, held, publish];
  if (held !== 1) return [owner, waiter, held];
  return waiter === '' ? [owner] : [owner, waiter];
}

/**
 * release-to.lua, the release that may hand the lock to the client's next waiter:
 * KEYS lock, waiting list, its deadlines, fence; ARGV owner, client id, next owner,
 * its lease, then what releaseToArgs() leaves off at its default: levels held,
 * publish verb, key retention.
 */
export const releaseTo = new Script<ReleaseToArgs, ReleaseReply>('release-to', sources.releaseTo, decode);

/** release-to.lua's ARGV, each default left off from the end (releaseToArgs). */
type ReleaseToArgs =
  | [owner: string, waiter: string, next: string, nextLease: number]
  | [owner: string, waiter: string, next: string, nextLease: number, held: number]
  | [owner: string, waiter: string, next: string, nextLease: number, held: number, publish: PublishVerb]
  | [owner: string, waiter: string, next: string, nextLease: number, held: number, publish: PublishVerb, retention: number];

/** release-to.lua's arguments with trailing defaults left off (see acquireArgs). */
export function releaseToArgs(owner: string, waiter: string, next: { owner: string; lease: number }, held: number, publish: PublishVerb, retention: number): ReleaseToArgs {
  if (retention !== SCRIPT_RETENTION) return [owner, waiter, next.owner, next.lease, held, publish, retention];
  if (publish !== 'publish') return [owner, waiter, next.owner, next.lease, held, publish];
  if (held !== 1) return [owner, waiter, next.owner, next.lease, held];
  return [owner, waiter, next.owner, next.lease];
}

/** fair-release.lua: KEYS lock, queue, deadlines, fence, tickets; ARGV owner, channel, publish verb, levels held, '1' to grant the head, key retention. */
export const fairRelease = new Script<[owner: string, channel: string, publish: PublishVerb, held: number, grant: '1' | '0', retention: number], ReleaseReply>(
  'fair-release',
  sources.fairRelease,
  (raw) => {
    const r = raw as unknown[];
    return r[0] === 2 ? { kind: 'released', receivers: 0, granted: r[2] === undefined || r[2] === null ? undefined : String(r[2]) } : decode(raw);
  },
);

/** fair-leave.lua: KEYS lock, queue, deadlines, tickets; ARGV owner, channel, publish verb, wait id. */
export const fairLeave = new Script<[owner: string, channel: string, publish: PublishVerb, wait: string], void>('fair-leave', sources.fairLeave, () => undefined);

/** waiting-leave.lua: KEYS lock, waiting list, its deadlines; ARGV client id, channel, publish verb. */
export const waitingLeave = new Script<[waiter: string, channel: string, publish: PublishVerb], void>('waiting-leave', sources.waitingLeave, () => undefined);

/** waiting-wake.lua: KEYS lock, waiting list, its deadlines; ARGV channel, publish verb. */
export const waitingWake = new Script<[channel: string, publish: PublishVerb], void>('waiting-wake', sources.waitingWake, () => undefined);

/** force-unlock.lua: KEYS lock; ARGV channel, publish verb. True when a lock was deleted. */
export const forceUnlock = new Script<[channel: string, publish: PublishVerb], boolean>('force-unlock', sources.forceUnlock, (raw) => Number(raw) === 1);
