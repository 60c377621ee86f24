import type { PublishVerb } from '../../store/scripts/acquire.js';
import type { RenewReply } from '../../store/scripts/maintain.js';
import { decode, type ReleaseReply } from '../../store/scripts/release.js';
import { Script, ints } from '../../store/scripts/script.js';
import * as sources from './sources.js';

// The semaphore's scripts (sem-*.lua; the keys they share are described in
// _semaphore.lua) beside their typed callers.

/**
 * What sem-acquire.lua answers. pttl when granted: the lease left of a grant a release
 * made before this call (taken up now). stamp: the name's last grant's stamp.
 */
export type SemAcquireReply = { granted: true; pttl?: number } | { granted: false; pttl: number; head: boolean; stamp: number } | { granted: false; limit: number };

/** sem-acquire.lua: KEYS sem, expiry, queue, deadlines, tickets; ARGV id, permits, limit, lease, heartbeat, wait id ('' for one attempt), channel, publish verb. */
export const semAcquire = new Script<
  [id: string, permits: number, limit: number, lease: number, heartbeat: number, wait: string, channel: string, publish: PublishVerb],
  SemAcquireReply
>('sem-acquire', sources.semAcquire, (raw) => {
  const r = raw as number[];
  if (r[0] === 1) return r[1] === undefined ? { granted: true } : { granted: true, pttl: Number(r[1]) };
  if (r[0] === -1) return { granted: false, limit: Number(r[1]) };
  return { granted: false, pttl: Number(r[1]), head: r[2] === 1, stamp: Number(r[3] ?? 0) };
});

/** sem-release.lua: KEYS sem, expiry, queue, deadlines, tickets; ARGV id, levels held before the call, channel, publish verb. */
export const semRelease = new Script<[id: string, held: number, channel: string, publish: PublishVerb], ReleaseReply>('sem-release', sources.semRelease, (raw) => {
  const r = raw as unknown[];
  return r[0] === 2 ? { kind: 'released', granted: r.slice(1).map(String) } : decode(raw);
});

/** sem-leave.lua: KEYS sem, expiry, queue, deadlines, tickets; ARGV id, wait id, channel, publish verb. */
export const semLeave = new Script<[id: string, wait: string, channel: string, publish: PublishVerb], void>('sem-leave', sources.semLeave, () => undefined);

/** sem-renew.lua: KEYS sem, expiry, queue, deadlines, tickets per item; ARGV id and lease per item. */
export const semRenew = new Script<(string | number)[], RenewReply[]>('sem-renew', sources.semRenew, (raw) => ints(raw).map((r) => (r === 1 ? 'renewed' : 'deleted')));

/** sem-available.lua: KEYS sem, expiry. The limit Redis keeps (null: none) and the permits held. */
export const semAvailable = new Script<[], { limit: number | null; used: number }>('sem-available', sources.semAvailable, (raw) => {
  const r = ints(raw);
  return { limit: r[0] < 0 ? null : r[0], used: r[1] };
});

/** sem-request-release.lua: KEYS sem, expiry; ARGV holder channel prefix, hold id. The permit ids asked. */
export const semRequestRelease = new Script<[holders: string, id: string], string[]>('sem-request-release', sources.semRequestRelease, (raw) => (raw as unknown[]).map(String));

/** sem-force-release.lua: KEYS sem, expiry, queue, deadlines, tickets; ARGV channel, publish verb, holder channel prefix, hold id. True when permits were deleted. */
export const semForceRelease = new Script<[channel: string, publish: PublishVerb, holders: string, id: string], boolean>('sem-force-release', sources.semForceRelease, (raw) => Number(raw) === 1);

/** One acquisition's permits, as sem-inspect.lua reads them. */
export interface PermitState {
  readonly id: string;
  readonly permits: number;
  /** ms left of its lease. */
  readonly ttl: number;
}

/** sem-inspect.lua: KEYS sem, expiry, queue. The limit Redis keeps (null: none), the waiters, the live permits (soonest to expire first). */
export const semInspect = new Script<[], { limit: number | null; queued: number; permits: PermitState[] }>('sem-inspect', sources.semInspect, (raw) => {
  const r = raw as unknown[];
  const permits: PermitState[] = [];
  for (let i = 2; i + 2 < r.length; i += 3) permits.push({ id: String(r[i]), permits: Number(r[i + 1]), ttl: Number(r[i + 2]) });
  const limit = Number(r[0]);
  return { limit: limit < 0 ? null : limit, queued: Number(r[1]), permits };
});
