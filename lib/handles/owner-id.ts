import { hostname } from 'node:os';

/**
 * Owner ids written in Redis say where the owner runs: `host:pid:clientId:scope`, so
 * that `inspect()` and `holdfast status` can tell who holds a lock. The host has ':'
 * and white space replaced, so the id splits back unambiguously.
 */
export function ownerPrefix(clientId: string): string {
  const host = hostname().replace(/[:\s]/g, '_') || 'unknown';
  return `${host}:${process.pid}:${clientId}:`;
}

/** Host and pid read back from an owner id; nulls for an id of another form. */
export function ownerOrigin(owner: string): { host: string | null; pid: number | null } {
  const [host, pid, client, scope] = owner.split(':');
  if (scope === undefined || client === undefined || !/^\d+$/.test(pid)) return { host: null, pid: null };
  return { host, pid: Number(pid) };
}
