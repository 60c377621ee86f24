import type { PublishVerb } from './acquire.js';
import type { RenewReply } from './maintain.js';
import { Script, ints } from './script.js';
import * as sources from './sources.js';

// The semaphore's scripts (sem-*.lua; the keys they share are described in
// _semPrune.lua) beside their typed callers.

/** What sem-acquire.lua answers. */
export type SemAcquireReply = { granted: true } | { granted: false; pttl: number; head: boolean } | { granted: false; limit: number };

/** sem-acquire.lua: KEYS H, Z, Q, D; ARGV id, permits, limit, lease, heartbeat, enqueue, channel, publish verb. */
export const semAcquire = new Script<
  [id: string, permits: number, limit: number, lease: number, heartbeat: number, enqueue: '1' | '0', channel: string, publish: PublishVerb],
  SemAcquireReply
>('sem-acquire', sources.semAcquire, (raw) => {
  const r = raw as number[];
  if (r[0] === 1) return { granted: true };
  if (r[0] === -1) return { granted: false, limit: Number(r[1]) };
  return { granted: false, pttl: Number(r[1]), head: r[2] === 1 };
});

/** What sem-release.lua answers. */
export type SemReleaseReply = { kind: 'notHeld' } | { kind: 'decremented'; count: number } | { kind: 'released'; receivers: 0 };

/** sem-release.lua: KEYS H, Z, Q, D; ARGV id, levels held before the call, channel, publish verb. */
export const semRelease = new Script<[id: string, held: number, channel: string, publish: PublishVerb], SemReleaseReply>('sem-release', sources.semRelease, (raw) => {
  const r = raw as number[];
  if (r[0] === 0) return { kind: 'notHeld' };
  if (r[0] === 1) return { kind: 'decremented', count: Number(r[1]) };
  return { kind: 'released', receivers: 0 };
});

/** sem-leave.lua: KEYS H, Z, Q, D; ARGV queue member, channel, publish verb. */
export const semLeave = new Script<[member: string, channel: string, publish: PublishVerb], void>('sem-leave', sources.semLeave, () => undefined);

/** sem-renew.lua: KEYS H, Z, Q, D per item; ARGV id and lease per item. */
export const semRenew = new Script<(string | number)[], RenewReply[]>('sem-renew', sources.semRenew, (raw) => ints(raw).map((r) => (r === 1 ? 'renewed' : 'deleted')));

/** sem-available.lua: KEYS H, Z. The limit Redis keeps (null: none) and the permits held. */
export const semAvailable = new Script<[], { limit: number | null; used: number }>('sem-available', sources.semAvailable, (raw) => {
  const r = ints(raw);
  return { limit: r[0] < 0 ? null : r[0], used: r[1] };
});

/** A waiter's entry in the queue: the permits it asks for, and its id. */
export const queueMember = (id: string, permits: number): string => `${permits}|${id}`;
