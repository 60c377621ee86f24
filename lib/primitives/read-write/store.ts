import type { ExactlyOnce } from '../../store/master/exactly-once.js';
import type { MasterPort } from '../../store/master/port.js';
import { granted } from '../../store/scripts/acquire.js';
import { inspect } from '../../store/scripts/maintain.js';
import { HOLDER_CHANNEL } from '../../store/scripts/release.js';
import type { QueueKeys } from '../../store/name-keys.js';
import * as rw from './scripts.js';
import type { AcquireResult, LockKeys, LockState, ReleaseResult, RenewScript } from '../../store/types.js';
import { identity, withTimeout } from '../../util/timeout.js';

const now = () => performance.now();

/**
 * The names of a read-write lock, all under its `{name}` hash tag. Both sides' keys
 * carry all of them; `key` is the side's own hash (`write`, or `read`), `wakeChannel`
 * its waiters' channel, the QueueKeys (the write hash's) the waiters of both sides.
 */
export interface ReadWriteKeys extends LockKeys, QueueKeys {
  /** Which side: 'r' the read holds, 'w' the write hold. */
  readonly side: 'r' | 'w';
  /** The write hold: hash owner -> levels (a lock's layout). */
  readonly write: string;
  /** The read holds: hash owner -> levels. */
  readonly read: string;
  /** Each read hold's own expiry: sorted set owner -> ms (server clock). */
  readonly readers: string;
  readonly readChannel: string;
  readonly writeChannel: string;
}

/** The keys of rw-acquire, -release and -leave (see _rwqueue.lua). */
const rwKeys = (k: ReadWriteKeys): string[] => [k.write, k.read, k.readers, k.fence, k.queue, k.deadlines, k.tickets];

/**
 * The read-write lock on one master or a Cluster (every key of a name under its hash
 * tag: one slot, one script call), over its MasterPort. Built once per client by
 * read-write.ts, not with syncReplicas (its grants would need the WAIT and give-backs
 * of replica-sync.ts; getReadWriteLock refuses that option up front).
 * Waiters of both sides wait in one queue in Redis: an attempt with a wait id joins (or
 * heartbeats) it when not granted, a release grants the head (the writer, or the leading
 * readers), and leave() leaves it, giving back a grant the wait never took up.
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
export class MasterReadWrite {
  private readonly once: ExactlyOnce<ReadWriteKeys>;

  constructor(private readonly master: MasterPort) {
    this.once = master.exactlyOnce<ReadWriteKeys>((k, owner, timeout, levels) => this.release(k, owner, timeout, levels).catch(() => undefined));
  }

  acquire(k: ReadWriteKeys, owner: string, lease: number, heartbeat: number, wait: string | undefined, timeout: number, held: number): Promise<AcquireResult> {
    let sentAt = 0;
    const send = () => {
      sentAt = now();
      return rw.acquire.run(this.master.connection, rwKeys(k), [owner, k.side, lease, heartbeat, wait ?? '', k.readChannel, k.writeChannel, this.master.publish, this.master.keyRetention]);
    };
    return this.once.grant(k, owner, held, timeout, send, (reply) => granted(reply, sentAt, lease));
  }

  release(k: ReadWriteKeys, owner: string, timeout: number, held: number): Promise<ReleaseResult> {
    const call = rw.release.run(this.master.connection, rwKeys(k), [owner, k.side, held, k.readChannel, k.writeChannel, this.master.publish, this.master.keyRetention]);
    return this.once.release(k, owner, held, timeout, call, identity);
  }

  leave(k: ReadWriteKeys, owner: string, timeout: number, wait: string): Promise<void> {
    const call = rw.leave.run(this.master.connection, rwKeys(k), [owner, k.side, wait, k.readChannel, k.writeChannel, this.master.publish, this.master.keyRetention]);
    return withTimeout(call, timeout, 'leave the queue of', k.name);
  }

  /** Deletes the side's holds and tells their holders (engine/holder-channel.ts). */
  forceUnlock(k: ReadWriteKeys, timeout: number): Promise<boolean> {
    const call = rw.forceUnlock.run(this.master.connection, [k.write, k.read, k.readers, k.queue], [k.side, k.readChannel, k.writeChannel, this.master.publish, HOLDER_CHANNEL, k.id]);
    return withTimeout(call, timeout, 'forceUnlock', k.name);
  }

  /** Tells every holder of the side to let go (the readers whose lease is live); changes nothing. The owners asked. */
  requestRelease(k: ReadWriteKeys, timeout: number): Promise<string[]> {
    return withTimeout(rw.requestRelease.run(this.master.connection, [k.write, k.read, k.readers], [k.side, HOLDER_CHANNEL, k.id]), timeout, 'requestRelease', k.name);
  }

  /** The side's holders, and the waiters of both sides (their queue is not on the side's hash). */
  inspect(k: ReadWriteKeys, timeout: number): Promise<LockState> {
    return withTimeout(inspect.run(this.master.connection, [k.key, k.fence, k.queue], []), timeout, 'inspect', k.name);
  }

  /**
   * The watchdog's renewal of the read holds of `keys` (a write hold is renewed as a
   * lock's hash is). Made per side, naming its own keys: a renewal batch holds several
   * names' holds, and each item's keys come from its own renewal (MasterStore.renew).
   */
  readRenewal(keys: ReadWriteKeys): RenewScript {
    return { script: rw.renewRead, arity: 3, keys: () => [keys.read, keys.readers, keys.write] };
  }
}
