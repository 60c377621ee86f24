import type { RedisClientPort } from '../../store/client/redis-client.js';
import { granted, type PublishVerb } from '../../store/scripts/acquire.js';
import { HOLDER_CHANNEL } from '../../store/scripts/release.js';
import * as rw from './scripts.js';
import type { AcquireResult, LockKeys, ReadWriteKeys, ReadWriteStore, ReleaseResult, RenewScript } from '../../store/types.js';
import { identity, withTimeout } from '../../util/timeout.js';
import { ExactlyOnce } from '../../store/master/exactly-once.js';

const now = () => performance.now();

/** The keys of rw-acquire, -release and -leave (see _rwqueue.lua). */
const rwKeys = (k: ReadWriteKeys): string[] => [k.write, k.read, k.readers, k.fence, k.queue, k.deadlines, k.tickets];

/** The keys a give-back or a renewal gets are the ones the hold was taken with: a read-write lock's. */
function sideKeys(k: LockKeys): ReadWriteKeys {
  if (!('side' in k)) throw new Error(`holdfast internal: '${k.name}' is not a read-write lock`);
  return k as ReadWriteKeys;
}

/**
 * The read-write lock on one master or a Cluster (every key of a name under its hash
 * tag: one slot, one script call). Built by MasterStore, not with syncReplicas (its
 * grants would need the WAIT and give-backs of replica-sync.ts; getReadWriteLock
 * refuses that option up front).
 *
 * Exactly once under resends (store/master/exactly-once.ts), rule by rule:
 * 1. rw-release.lua takes the levels the client holds before the call and applies
 *    only when the side's hash has as many: a resent release changes nothing.
 * 2. A grant whose connection broke while out is set to the client's level by
 *    set-level.lua on the side's own hash (`key`: W or R, owner -> levels, as a lock's).
 * 3, 4. A grant that failed with its connection or came after its call timed out is
 *    given back through rw-release.lua with the levels Redis counts with it (below).
 * 5. A last release answered "not held" after a reconnect counts as released.
 * 6. A release's grant (its reply lost or late) stands as its mark for that wait, which
 *    takes it up or gives it back as it leaves.
 * Joining the queue (a set member and a list entry guarded by it), leaving it and the
 * renewal are idempotent as they are.
 */
export class MasterReadWrite implements ReadWriteStore {
  private readonly once: ExactlyOnce;

  constructor(
    private readonly connection: RedisClientPort,
    levelsNow: (key: string, owner: string) => number,
    private readonly keyRetention: number,
    private readonly publish: PublishVerb,
  ) {
    this.once = new ExactlyOnce(connection, levelsNow, (k, owner, timeout, levels) => this.release(sideKeys(k), owner, timeout, levels).catch(() => undefined));
  }

  acquire(k: ReadWriteKeys, owner: string, lease: number, heartbeat: number, wait: string | undefined, timeout: number, held: number): Promise<AcquireResult> {
    let sentAt = 0;
    const send = () => {
      sentAt = now();
      return rw.acquire.run(this.connection, rwKeys(k), [owner, k.side, lease, heartbeat, wait ?? '', k.readChannel, k.writeChannel, this.publish, this.keyRetention]);
    };
    return this.once.grant(k, owner, held, timeout, send, (reply) => granted(reply, sentAt, lease));
  }

  release(k: ReadWriteKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult> {
    const call = rw.release.run(this.connection, rwKeys(k), [owner, k.side, held, k.readChannel, k.writeChannel, this.publish, this.keyRetention]);
    return this.once.release(k, owner, held, timeout, call, identity);
  }

  leave(k: ReadWriteKeys, owner: string, timeout: number, wait: string): Promise<void> {
    const call = rw.leave.run(this.connection, rwKeys(k), [owner, k.side, wait, k.readChannel, k.writeChannel, this.publish, this.keyRetention]);
    return withTimeout(call, timeout, 'leave the queue of', k.name);
  }

  forceUnlock(k: ReadWriteKeys, timeout: number): Promise<boolean> {
    const call = rw.forceUnlock.run(this.connection, [k.write, k.read, k.readers, k.queue], [k.side, k.readChannel, k.writeChannel, this.publish, HOLDER_CHANNEL, k.id]);
    return withTimeout(call, timeout, 'forceUnlock', k.name);
  }

  requestRelease(k: ReadWriteKeys, timeout: number): Promise<string[]> {
    return withTimeout(rw.requestRelease.run(this.connection, [k.write, k.read, k.readers], [k.side, HOLDER_CHANNEL, k.id]), timeout, 'requestRelease', k.name);
  }

  /**
   * One for every read hold: a renewal batch holds several names' holds and runs the
   * script of its first item for all, so the keys come from each item's own keys.
   */
  readonly renewal: RenewScript = {
    script: rw.renewRead,
    arity: 3,
    keys: (k) => {
      const keys = sideKeys(k);
      return [keys.read, keys.readers, keys.write];
    },
  };

  close(): void {
    this.once.close();
  }
}
