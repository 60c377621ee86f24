// What holds a name (kinds.ts: lock.inspect(), and the read holds and permits) as text
// for people: status prints it whole, ls one line per kind of hold.
import type { LockHolder, PermitHolder } from '../index.js';
import type { NameStatus } from './kinds.js';

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

/** 'web-1 pid 4242 (2 permits)'; the permit id when it names no host. */
export function showPermit(h: PermitHolder): string {
  const who = h.host !== null && h.pid !== null ? `${h.host} pid ${h.pid}` : h.id;
  return `${who} (${h.permits} ${h.permits === 1 ? 'permit' : 'permits'})`;
}

/** Rows of `label: value`, the label of the first of a group only. */
function group(rows: [string, string][], label: string, values: readonly string[]): void {
  for (const [i, value] of values.entries()) rows.push([i === 0 ? label : '', value]);
}

/** The whole of `holdfast status` without --json. */
export function showStatus(info: NameStatus): string {
  const rows: [string, string][] = [['name', info.name]];
  const { read, semaphore } = info;
  if (info.locked || (!read && !semaphore)) rows.push(['state', info.locked ? `held, TTL ${showTtl(info.ttl)}` : 'free']);
  group(rows, 'holder', info.holders.map((h) => `${showHolder(h)}   owner ${h.owner}`));
  if (read) {
    rows.push(['read', `held by ${read.holders.length} ${read.holders.length === 1 ? 'reader' : 'readers'}, TTL ${showTtl(read.ttl)}`]);
    group(rows, 'reader', read.holders.map((h) => `${showHolder(h)}   owner ${h.owner}`));
  }
  if (semaphore) {
    rows.push(['semaphore', `${semaphore.used} of ${semaphore.limit ?? '?'} permits held, ${semaphore.waiters} waiting`]);
    group(rows, 'permit', semaphore.holders.map((h) => `${showPermit(h)}, TTL ${showTtl(h.ttl)}   id ${h.id}`));
  }
  rows.push(['token', info.token === null ? 'none minted yet' : `${info.token} (the last one minted)`]);
  rows.push(['waiters', info.waiters === null ? 'not known (a fair lock counts them)' : String(info.waiters)]);
  return rows.map(([label, value]) => `${label ? `${label}:` : ''}`.padEnd(11) + value).join('\n') + '\n';
}

/** `holdfast ls` without --json: a header and one line per kind of hold of each name, in columns. */
export function showList(infos: readonly NameStatus[]): string {
  const lines: string[][] = [];
  for (const i of infos) {
    if (i.locked) lines.push([i.name, 'lock', showTtl(i.ttl), i.token === null ? '-' : String(i.token), i.holders.map(showHolder).join(', ')]);
    if (i.read) lines.push([i.name, 'read', showTtl(i.read.ttl), i.read.token === null ? '-' : String(i.read.token), i.read.holders.map(showHolder).join(', ')]);
    const sem = i.semaphore;
    if (sem && sem.used > 0) lines.push([i.name, `semaphore ${sem.used}/${sem.limit ?? '?'}`, showTtl(sem.holders[0]?.ttl ?? -2), '-', sem.holders.map(showPermit).join(', ')]);
  }
  if (lines.length === 0) return '';
  const rows = [['NAME', 'KIND', 'TTL', 'TOKEN', 'HOLDERS'], ...lines];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join('  ')).join('\n') + '\n';
}
