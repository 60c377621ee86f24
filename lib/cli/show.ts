// LockInfo (lock.inspect()) as text for people: status prints it whole, ls one line per lock.
import type { LockHolder, LockInfo } from '../index.js';

/** '29.8 s'; -1: the key has no expiry; -2: absent. */
export function showTtl(ttl: number): string {
  if (ttl === -1) return 'no expiry';
  if (ttl < 0) return '-';
  return ttl < 10_000 ? `${(ttl / 1000).toFixed(1)} s` : `${Math.round(ttl / 1000)} s`;
}

/** 'web-1 pid 4242' (and the reentry levels past one); the owner id when it names no host. */
export function showHolder(h: LockHolder): string {
  const who = h.host !== null && h.pid !== null ? `${h.host} pid ${h.pid}` : h.owner;
  return h.count > 1 ? `${who} (${h.count} levels)` : who;
}

/** The whole of `holdfast status` without --json. */
export function showStatus(info: LockInfo): string {
  const rows: [string, string][] = [['name', info.name]];
  rows.push(['state', info.locked ? `held, TTL ${showTtl(info.ttl)}` : 'free']);
  for (const [i, h] of info.holders.entries()) rows.push([i === 0 ? 'holder' : '', `${showHolder(h)}   owner ${h.owner}`]);
  rows.push(['token', info.token === null ? 'none minted yet' : `${info.token} (the last one minted)`]);
  rows.push(['waiters', info.waiters === null ? 'not known (a fair lock counts them)' : String(info.waiters)]);
  return rows.map(([label, value]) => `${label ? `${label}:` : ''}`.padEnd(9) + value).join('\n') + '\n';
}

/** `holdfast ls` without --json: a header and one line per lock, in columns. */
export function showList(infos: readonly LockInfo[]): string {
  if (infos.length === 0) return '';
  const rows = [['NAME', 'TTL', 'TOKEN', 'HOLDERS'], ...infos.map((i) => [i.name, showTtl(i.ttl), i.token === null ? '-' : String(i.token), i.holders.map(showHolder).join(', ')])];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join('  ')).join('\n') + '\n';
}
