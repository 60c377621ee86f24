import type { LockKeys } from './types.js';

/**
 * A name's keys: the lock key, and every other key derived from it (`key` + suffix) the
 * first time it is asked for. A handle then holds one string instead of seven: an idle
 * handle touches none (the
 * watchdog scenario's 10,000 held locks count every byte of a handle).
 */
export class NameKeys implements LockKeys {
  readonly id: string;
  private fenceKey: string | undefined;
  private channelKey: string | undefined;
  private queueKey: string | undefined;
  private deadlinesKey: string | undefined;
  private fairChannelKey: string | undefined;
  private ticketsKey: string | undefined;

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

  get queue(): string {
    return (this.queueKey ??= `${this.key}:queue`);
  }

  get deadlines(): string {
    return (this.deadlinesKey ??= `${this.key}:deadlines`);
  }

  get tickets(): string {
    return (this.ticketsKey ??= `${this.key}:tickets`);
  }

  get fairChannel(): string {
    return (this.fairChannelKey ??= `${this.key}:next`);
  }
}

/**
 * The hold id of a read-write lock's write side whose hash is the lock key `key`
 * (primitives/read-write/read-write.ts): its own id, so that a scope's plain lock and
 * write lock of one name are two holds in the client, though Redis keeps both in `key`.
 */
export function writeHoldId(key: string): string {
  return `${key}#w`;
}
