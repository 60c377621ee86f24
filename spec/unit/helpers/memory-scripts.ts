/**
 * The lock's scripts, over MemoryRedis, line for line as the Lua (lib/primitives/lock:
 * queue-acquire.lua, queue-release.lua, queue-leave.lua; lib/store/scripts: their prelude
 * _queue.lua, acquire.lua and release.lua of quorum mode, _mint.lua, _notify.lua). Each
 * function is one script: it runs synchronously, so atomically. Replies are the scripts'
 * raw arrays, decoded by the store as the scripts' typed callers decode them.
 *
 * Kept to the Lua's structure on purpose: when a script changes, the function of the
 * same name here changes the same way. spec/integration/memory-mirror.spec.ts checks
 * that they agree (replies, messages, keys) on random sequences against a real server.
 */
import type { MemoryRedis } from './memory-redis.js';

/** The keys and arguments of one name's queue (`q` in _queue.lua). */
export interface QueueContext {
  readonly lock: string;
  readonly fence: string;
  readonly queue: string;
  readonly deadlines: string;
  readonly tickets: string;
  /** The wake-up channel (keys.wakeChannel); each client's is this, ':', its owner prefix. */
  readonly channel: string;
  readonly retention: number;
}

// ---- _notify.lua -------------------------------------------------------------------

export function notify(r: MemoryRedis, channel: string, message: string): number {
  return r.publish(channel, message);
}

/** The client's part of an owner id, up to and including its last ':' (string.match(owner, '^(.*:)')). */
export function clientPart(owner: string): string {
  const at = owner.lastIndexOf(':');
  return at < 0 ? owner : owner.slice(0, at + 1);
}

export function wakeOwner(r: MemoryRedis, channel: string, owner: string): number {
  return notify(r, `${channel}:${clientPart(owner)}`, owner);
}

// ---- _mint.lua ---------------------------------------------------------------------

/** The server's clock in µs (clockMicros); MemoryRedis keeps ms. */
function clockMicros(r: MemoryRedis): number {
  return r.time() * 1000;
}

export function mint(r: MemoryRedis, fence: string, retention: number): number {
  const token = Math.max(Number(r.get(fence) ?? '0') + 1, clockMicros(r));
  r.set(fence, token.toFixed(0), retention);
  return token;
}

export function mintCounted(r: MemoryRedis, fence: string, retention: number): number {
  let token = r.incr(fence);
  if (token === 1) {
    token = clockMicros(r);
    r.set(fence, String(token), retention);
  } else {
    r.pexpire(fence, retention);
  }
  return token;
}

// ---- _queue.lua --------------------------------------------------------------------

function newHead(r: MemoryRedis, q: QueueContext, known?: string, locked = false): void {
  const head = known ?? r.lindex0(q.queue);
  if (head === undefined) return;
  if (!locked && r.exists(q.lock) === 0) wakeOwner(r, q.channel, head);
}

function prune(r: MemoryRedis, q: QueueContext, now: number): void {
  const dead = r.zrangeUpTo(q.deadlines, now);
  if (dead.length === 0) return;
  const head = r.lindex0(q.queue);
  for (const owner of dead) {
    r.lrem(q.queue, owner);
    r.zrem(q.deadlines, owner);
    r.hdel(q.tickets, owner);
  }
  if (r.lindex0(q.queue) !== head) newHead(r, q);
}

function dequeue(r: MemoryRedis, q: QueueContext, owner: string, known?: string, locked = false): void {
  const head = known ?? r.lindex0(q.queue);
  // LPOP for the head, LREM otherwise: an owner is queued once, so both remove it alike.
  r.lrem(q.queue, owner);
  r.zrem(q.deadlines, owner);
  const next = r.lindex0(q.queue);
  if (next === undefined) {
    r.del(q.deadlines);
  } else if (head === owner) {
    newHead(r, q, next, locked);
  }
}

function grantHead(r: MemoryRedis, q: QueueContext, head: string, now: number, allowed: boolean): string | undefined {
  const ticket = /^(w[0-9A-Za-z]+) (\d+) (\d+)$/.exec(r.hget(q.tickets, head) ?? '');
  const lease = ticket ? Number(ticket[2]) : 0;
  if (!allowed || !ticket || now - Number(ticket[3]) > lease / 2) {
    wakeOwner(r, q.channel, head);
    return undefined;
  }
  const wait = ticket[1];
  r.hset(q.lock, head, 1);
  r.pexpire(q.lock, lease);
  const token = mint(r, q.fence, q.retention).toFixed(0);
  r.hset(q.tickets, head, `g ${wait} ${token}`);
  dequeue(r, q, head, head, true);
  const message = `${head} ${wait} ${token}`;
  notify(r, `${q.channel}:${clientPart(head)}`, message);
  return message;
}

// ---- queue-acquire.lua -------------------------------------------------------------

/** {1, token} | {1, token, pttl} (a grant taken up) | {0, pttl, isHead, counter}. */
export function queueAcquire(r: MemoryRedis, q: QueueContext, owner: string, lease: number, heartbeat: number, wait: string, grants: boolean): number[] {
  if (r.exists(q.lock, q.queue, q.tickets) === 0) {
    r.hset(q.lock, owner, 1);
    r.pexpire(q.lock, lease);
    return [1, mint(r, q.fence, q.retention)];
  }
  const now = r.time();
  prune(r, q, now);

  if (r.hexists(q.lock, owner)) {
    if (wait !== '') {
      const granted = new RegExp(`^g ${wait} (\\d+)$`).exec(r.hget(q.tickets, owner) ?? '');
      if (granted) {
        r.hdel(q.tickets, owner);
        return [1, Number(granted[1]), r.pttl(q.lock)];
      }
    }
    r.hincrby(q.lock, owner, 1);
    if (r.pttl(q.lock) < lease) r.pexpire(q.lock, lease);
    r.pexpire(q.fence, q.retention);
    return [1, Number(r.get(q.fence) ?? '0')];
  }

  let head = r.lindex0(q.queue);
  if (r.exists(q.lock) === 0) {
    if (head === undefined || head === owner) {
      r.hdel(q.tickets, owner);
      r.hset(q.lock, owner, 1);
      r.pexpire(q.lock, lease);
      if (r.zscore(q.deadlines, owner) !== undefined) dequeue(r, q, owner, head, true);
      return [1, mint(r, q.fence, q.retention)];
    }
    grantHead(r, q, head, now, grants);
    head = r.lindex0(q.queue);
  }

  if (wait !== '') {
    if (r.zscore(q.deadlines, owner) === undefined) {
      r.rpush(q.queue, owner);
      head ??= owner;
    }
    r.zadd(q.deadlines, now + heartbeat, owner);
    r.hset(q.tickets, owner, `${wait} ${lease} ${now}`);
    if (r.pttl(q.deadlines) < heartbeat * 1.5) {
      r.pexpire(q.queue, heartbeat * 2);
      r.pexpire(q.deadlines, heartbeat * 2);
    }
    if (r.pttl(q.tickets) < heartbeat * 1.5) r.pexpire(q.tickets, heartbeat * 2);
  }
  return [0, r.pttl(q.lock), head === owner ? 1 : 0, Number(r.get(q.fence) ?? '0')];
}

// ---- queue-release.lua -------------------------------------------------------------

/** [0] not held, [1, count] still held, [2] released, [2, grant] released and granted. */
export function queueRelease(r: MemoryRedis, q: QueueContext, owner: string, held: number, grants: boolean): (number | string)[] {
  const levels = Number(r.hget(q.lock, owner) ?? '0');
  if (levels === 0) return [0];
  if (levels < held) return [1, levels];
  const count = r.hincrby(q.lock, owner, -1);
  if (count > 0) return [1, count];
  r.del(q.lock);
  if (r.exists(q.queue) === 0) {
    r.del(q.tickets);
    return [2];
  }
  r.hdel(q.tickets, owner);
  const now = r.time();
  prune(r, q, now);
  const head = r.lindex0(q.queue);
  if (head === undefined) {
    r.del(q.queue, q.deadlines, q.tickets);
    return [2];
  }
  const grant = grantHead(r, q, head, now, grants);
  return grant === undefined ? [2] : [2, grant];
}

// ---- queue-leave.lua ---------------------------------------------------------------

export function queueLeave(r: MemoryRedis, q: QueueContext, owner: string, wait: string): void {
  const ticket = r.hget(q.tickets, owner) ?? '';
  if (new RegExp(`^g ${wait} \\d+$`).test(ticket)) {
    r.hdel(q.tickets, owner);
    if (r.hexists(q.lock, owner) && r.hincrby(q.lock, owner, -1) <= 0) r.del(q.lock);
  } else if (ticket.startsWith(`${wait} `)) {
    r.hdel(q.tickets, owner);
  }
  const head = r.lindex0(q.queue);
  if (r.zscore(q.deadlines, owner) !== undefined || head === owner) dequeue(r, q, owner);
  if (r.exists(q.queue) === 0) {
    if (r.exists(q.lock) === 0) r.del(q.tickets);
  } else if (head !== owner && r.exists(q.lock) === 0) {
    wakeOwner(r, q.channel, r.lindex0(q.queue)!);
  }
}

// ---- acquire.lua, release.lua (quorum mode: no queue) ------------------------------

/** {1, token} | {0, pttl, counter}. */
export function acquire(r: MemoryRedis, key: string, fence: string, owner: string, lease: number, retention: number): number[] {
  if (r.exists(key) === 0) {
    r.hset(key, owner, 1);
    r.pexpire(key, lease);
    return [1, mintCounted(r, fence, retention)];
  }
  if (r.hexists(key, owner)) {
    r.hincrby(key, owner, 1);
    if (r.pttl(key) < lease) r.pexpire(key, lease);
    r.pexpire(fence, retention);
    return [1, Number(r.get(fence) ?? '0')];
  }
  return [0, r.pttl(key), Number(r.get(fence) ?? '0')];
}

/** {0} not held, {1, count} still held, {2} released ('released' on key:ch). */
export function release(r: MemoryRedis, key: string, owner: string, held: number): number[] {
  const levels = Number(r.hget(key, owner) ?? '0');
  if (levels === 0) return [0];
  if (levels < held) return [1, levels];
  if (levels > 1) return [1, r.hincrby(key, owner, -1)];
  r.del(key);
  notify(r, `${key}:ch`, 'released');
  return [2];
}

// ---- renew.lua, force-unlock.lua ---------------------------------------------------

/** 1 renewed, 2 held by another owner, 0 gone. */
export function renew(r: MemoryRedis, key: string, owner: string, lease: number): number {
  if (r.hexists(key, owner)) {
    r.pexpire(key, lease);
    return 1;
  }
  return r.exists(key) === 1 ? 2 : 0;
}

export function forceUnlock(r: MemoryRedis, key: string, queue: string | undefined, channel: string, wakeChannel: string): boolean {
  if (r.del(key) === 1) {
    notify(r, channel, 'released');
    if (queue !== undefined && r.exists(queue) === 1) notify(r, wakeChannel, '*');
    return true;
  }
  return false;
}
