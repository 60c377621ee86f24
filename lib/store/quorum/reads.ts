import { QuorumError, type Vote } from '../../errors/QuorumError.js';
import type { LockState } from '../types.js';

/** One master's answer to a call sent to every master. */
export type Reply<T> = { ok: true; value: T } | { ok: false; error: Error };

/**
 * The replies so far, as soon as `quorum` of them succeeded and agree (the same
 * `kind`): the masters still out are left undefined and their calls run on (they
 * never reject). Otherwise every reply. Like Redlock's, a call then waits for a
 * majority, not for the slowest master; a disagreement still hears every master.
 */
export function untilAgreed<T>(calls: readonly Promise<Reply<T>>[], quorum: number, kind: (value: T) => string): Promise<(Reply<T> | undefined)[]> {
  return new Promise((resolve) => {
    const replies: (Reply<T> | undefined)[] = calls.map(() => undefined);
    const kinds: string[] = [];
    let answered = 0;
    calls.forEach((call, i) => {
      void call.then((reply) => {
        replies[i] = reply;
        answered += 1;
        if (reply.ok) {
          const k = kind(reply.value);
          kinds.push(k);
          if (kinds.filter((seen) => seen === k).length === quorum) resolve(replies.slice());
        }
        if (answered === calls.length) resolve(replies);
      });
    });
  });
}

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
