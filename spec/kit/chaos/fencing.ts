/**
 * The history checker's fencing checks (history.ts): tokens in start order, reads'
 * tokens, and a model of a fenced store kept in process: it accepts a write only if
 * (data epoch, token) is at least the highest seen, so it is reset with Redis (ordered
 * per data epoch). The register (register-check.ts) is the measured one; this model
 * also covers runs without it and names each write's fate. Pure.
 */
import type { Hold, Violation } from './records';

export interface WriteCounts {
  total: number;
  accepted: number;
  rejectedLate: number;
  acceptedLateAfterDataLoss: number;
  rejectedSpurious: number;
}

function epochOf(time: number, lossTimes: readonly number[]): number {
  let e = 0;
  for (const t of lossTimes) if (t <= time) e++;
  return e;
}

/** A data loss between two moments (inclusive of `to`, with `slack` before `from`). */
export function lossBetween(from: number, to: number, lossTimes: readonly number[], slack: number): boolean {
  return lossTimes.some((t) => t > from - slack && t <= to);
}

/**
 * Read-write locks: a read's token is the counter when it began, so at least the token
 * of every write that had ended by then (unless the counter was lost with the data).
 */
export function readTokenViolations(lock: string, list: readonly Hold[], lossTimes: readonly number[], slack: number): Violation[] {
  const out: Violation[] = [];
  // Writes that ended cleanly, by end; reads by start (list is sorted by start): one pass.
  const writes = list.filter((w) => w.side === 'write' && !w.killed && w.lostAt === undefined).sort((a, b) => a.end! - b.end!);
  let last: Hold | undefined;
  let i = 0;
  for (const r of list) {
    if (r.side !== 'read') continue;
    for (; i < writes.length && writes[i]!.end! < r.start; i++) if (!last || writes[i]!.token > last.token) last = writes[i];
    if (!last || r.token >= last.token || lossBetween(last.start, r.start, lossTimes, slack)) continue;
    out.push({ kind: 'token', lock, message: `read ${r.id} (start ${r.start}) carried token ${r.token}, below ${last.token} of write ${last.id} that ended at ${last.end}` });
  }
  return out;
}

/**
 * Every write of the exclusive holds of one lock through the fenced store: a late write
 * (a later hold had begun and written before it) must be refused, unless the data was
 * lost since the hold began; a write of the only holder must be accepted, unless the
 * counter was lost lately.
 */
export function fencedStore(
  lock: string,
  exclusive: readonly Hold[],
  opts: {
    lossTimes: readonly number[];
    /** A data-losing failover ran within (from - slack, to]: a counter increment in it may be lost, and a token minted again. */
    failoverWithin: (from: number, to: number) => boolean;
    slack: number;
    lease: number;
    excusedPairs: ReadonlySet<string>;
    counts: WriteCounts;
  },
): Violation[] {
  const { lossTimes, failoverWithin, slack, lease, excusedPairs, counts } = opts;
  const violations: Violation[] = [];
  const writes: { at: number; hold: Hold; epoch: number }[] = [];
  for (const h of exclusive) {
    // The data epoch in which the hold was granted: its start, less the slack
    // (a grant from the old server may be logged just after it died).
    const epoch = epochOf(h.start - slack, lossTimes);
    for (const at of h.writes) writes.push({ at, hold: h, epoch });
  }
  // Writes in the same millisecond are concurrent: the lower token first (no false alarm).
  writes.sort((x, y) => x.at - y.at || x.epoch - y.epoch || x.hold.token - y.hold.token);
  let maxEpoch = -1;
  let maxToken = -Infinity;
  for (const w of writes) {
    counts.total++;
    const h = w.hold;
    const accepted = w.epoch > maxEpoch || (w.epoch === maxEpoch && h.token >= maxToken);
    if (accepted) {
      maxEpoch = w.epoch;
      maxToken = h.token;
      counts.accepted++;
    }
    // Late: a later hold of this lock had begun, and written, before this write.
    const successor = exclusive.find((o) => o !== h && o.start > h.start && o.writes.length > 0 && o.writes[0]! < w.at);
    if (successor) {
      if (!accepted) counts.rejectedLate++;
      else if (lossBetween(h.start, w.at, lossTimes, 0) || failoverWithin(h.start, w.at)) counts.acceptedLateAfterDataLoss++;
      else {
        violations.push({ kind: 'fencing', lock, message: `late write at ${w.at} by ${h.id} (token ${h.token}) was accepted although ${successor.id} (token ${successor.token}) began at ${successor.start}${excusedPairs.has(`${h.id}|${successor.id}`) ? ' (during an excused overlap)' : ''}` });
      }
    } else if (!accepted) {
      if (lossBetween(w.at - 3 * lease, w.at, lossTimes, 0)) counts.rejectedSpurious++;
      else violations.push({ kind: 'fencing', lock, message: `write at ${w.at} by ${h.id} (token ${h.token}), the only holder then, was rejected by the store (highest token ${maxToken})` });
    }
  }
  return violations;
}
