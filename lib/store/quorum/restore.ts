import type { MasterStore as Master } from '../master/master.js';
import { restore } from '../scripts/maintain.js';
import type { RenewItem } from '../types.js';

/** Holds per restore script call, as for renewals. */
const CHUNK = 500;

/**
 * Puts holds back on a master that answered a renewal "gone" (it restarted empty, or
 * lost the key otherwise) while a majority renewed them. Without this a hold rests on
 * fewer masters after each restart, and a rolling restart (one master restarted, a
 * second one down later) loses a lock that a majority carried throughout.
 *
 * Best effort, in the background: the master counts toward the next renewal's majority
 * once it has the key again. The script sets the key only where it is absent, so it
 * never overrides another owner's hold. Quorum masters are plain Redis servers (no
 * Cluster), so one call per chunk; rare (a master lost keys), so sent as EVAL.
 */
export function restoreHolds(m: Master, items: readonly RenewItem[]): void {
  // A down master would queue the call and run it after it comes back, maybe well after
  // the hold was released (a release skips down masters).
  if (m.down) return;
  for (let start = 0; start < items.length; start += CHUNK) {
    const chunk = items.slice(start, start + CHUNK);
    const args: (string | number)[] = [];
    for (const item of chunk) args.push(item.owner, item.levels ?? 1, item.lease);
    // EVAL, not EVALSHA: the master restarted, so it lacks the script, and a NOSCRIPT
    // fallback would send it again after commands sent later (a release of the hold).
    m.connection.eval(restore.lua, chunk.map((item) => item.keys.key), args).catch(() => undefined);
  }
}

/**
 * Keys whose hold this client ended (a last release, a forceUnlock) while a renewal
 * was out. A renewal that a majority confirmed before the release reached them, and a
 * master answered "gone", must not put the hold back after the release deleted it: the
 * key would stay on that master for a lease after the unlock. Release and restore go
 * out on the same connection, in order (the restore as EVAL, never resent after a
 * NOSCRIPT), so a restore sent before the release is deleted by it; only a restore
 * decided after the release was sent is at risk, and this log sees it.
 */
export class EndedWhileRenewing {
  private seq = 0;
  /** key -> sequence number of its latest end. */
  private readonly ended = new Map<string, number>();
  /** The mark of every renewal in flight (the sequence number when it started). */
  private readonly open: number[] = [];

  /** A renewal starts; returns its mark. */
  begin(): number {
    this.open.push(this.seq);
    return this.seq;
  }

  /** A hold of `key` ends now (its last release or a forceUnlock is being sent). */
  end(key: string): void {
    // Nothing in flight: no renewal can have seen the hold and not yet decided.
    if (this.open.length > 0) this.ended.set(key, ++this.seq);
  }

  /** A hold of `key` ended after the renewal marked `mark` began. */
  endedSince(key: string, mark: number): boolean {
    return (this.ended.get(key) ?? 0) > mark;
  }

  /** The renewal marked `mark` has decided; ends older than every open renewal are forgotten. */
  finish(mark: number): void {
    this.open.splice(this.open.indexOf(mark), 1);
    if (this.open.length === 0) return this.ended.clear();
    const oldest = Math.min(...this.open);
    for (const [key, s] of this.ended) if (s <= oldest) this.ended.delete(key);
  }
}
