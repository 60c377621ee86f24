import { QuorumError, type Vote } from '../../errors/QuorumError.js';
import type { LockState } from '../types.js';

/** One master's answer to a call sent to every master. */
export type Reply<T> = { ok: true; value: T } | { ok: false; error: Error };

/** The votes of a call that failed on too many masters (answers count as granted). */
export function errorVotes(replies: readonly Reply<unknown>[]): Vote[] {
  return replies.map((r, i) => (r.ok ? { master: i, outcome: 'granted', token: 0 } : { master: i, outcome: 'error', error: r.error }));
}

/** A value a majority agrees is at least this: the quorum-th largest answer. */
export function majorityValue(replies: readonly Reply<number>[], quorum: number, name: string, action: string): number {
  const values = replies.flatMap((r) => (r.ok ? [r.value] : [])).sort((a, b) => b - a);
  if (values.length < quorum) throw new QuorumError(name, action, quorum, errorVotes(replies));
  return values[quorum - 1];
}

/** A majority's view of a lock: holders on a majority (their smallest count), the quorum-th longest TTL, the highest token. */
export function majorityState(replies: readonly Reply<LockState>[], quorum: number, name: string): LockState {
  const states = replies.flatMap((r) => (r.ok ? [r.value] : []));
  if (states.length < quorum) throw new QuorumError(name, 'inspect', quorum, errorVotes(replies));
  const pttls = states.map((s) => s.pttl).sort((a, b) => b - a);
  const tokens = states.flatMap((s) => (s.token === null ? [] : [s.token]));
  const counts = new Map<string, number[]>();
  for (const s of states) for (const h of s.holders) counts.set(h.owner, [...(counts.get(h.owner) ?? []), h.count]);
  const holders = [...counts].filter(([, c]) => c.length >= quorum).map(([owner, c]) => ({ owner, count: Math.min(...c) }));
  return { pttl: pttls[quorum - 1], token: tokens.length > 0 ? Math.max(...tokens) : null, queued: 0, holders };
}
