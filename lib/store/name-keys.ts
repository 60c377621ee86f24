import type { LockKeys } from './types.js';

/**
 * A name's keys: the lock key, and every other key derived from it (`key` + suffix) the
 * first time it is asked for. A handle then holds one string instead of four: an idle
 * handle touches none (the watchdog scenario's 10,000 held locks count every byte of a
 * handle). A queue's keys (queueKeys) are not kept: the primitives that queue derive
 * them per call.
 */
export class NameKeys implements LockKeys {
  readonly id: string;
  private fenceKey: string | undefined;
  private channelKey: string | undefined;
  private wakeChannelKey: string | undefined;

  constructor(
    readonly name: string,
    readonly key: string,
  ) {
    this.id = key;
  }

  get fence(): string {
    return (this.fenceKey ??= `${this.key}:fence`);
  }

  get channel(): string {
    return (this.channelKey ??= `${this.key}:ch`);
  }

  get wakeChannel(): string {
    return (this.wakeChannelKey ??= `${this.key}:next`);
  }
}

/**
 * The keys of the queue of waiters (_queue.lua's `q.queue`, `q.deadlines`, `q.tickets`)
 * on the hash `key`: the lock's, a semaphore's, a read-write lock's (on its write hash,
 * for both sides). Each is `key` + suffix, in its `{name}` hash tag (one slot); never
 * renamed, since clients of other versions share them.
 */
export interface QueueKeys {
  /** List: the waiting owners in arrival order, the head first. */
  readonly queue: string;
  /** Sorted set: owner -> heartbeat deadline (server ms). */
  readonly deadlines: string;
  /** Hash: owner -> its ticket, or the grant a release made it. */
  readonly tickets: string;
}

export function queueKeys(key: string): QueueKeys {
  return { queue: `${key}:queue`, deadlines: `${key}:deadlines`, tickets: `${key}:tickets` };
}

/**
 * The hold id of a read-write lock's write side whose hash is the lock key `key`
 * (primitives/read-write/read-write.ts): its own id, so that a scope's plain lock and
 * write lock of one name are two holds in the client, though Redis keeps both in `key`.
 */
export function writeHoldId(key: string): string {
  return `${key}#w`;
}
