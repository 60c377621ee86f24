import { Background } from '../util/background.js';
import type { WaitHost } from './request.js';
import type { WaitQueue } from './wait-queue.js';

/**
 * Leaving the plain lock's waiting lists in Redis (scripts/_waiting.lua), with the
 * leaves tracked so that close() can wait for them. Invariant: a queue marked `listed`
 * leaves its list once it is idle. An entry nobody leaves heads the list for up to an
 * entry lease, and once its turn has come the free lock is its alone.
 */
export class ListMembership {
  /** Leaves in flight (see settled()). */
  private readonly leaving = new Background();

  constructor(private readonly host: WaitHost) {}

  /** Takes this client off the queue's list (none of its waiters waits any longer). */
  leave(queue: WaitQueue): void {
    const list = this.host.store.waitingList;
    if (!queue.listed || !list) return;
    queue.listed = false;
    // Closing, the connection may be gone first: the entry then expires with its lease.
    this.leaving.track(list.leave(queue.keys, this.host.timeoutFor(list.entryLease)).catch((error: unknown) => this.host.closed || this.host.error(error)));
  }

  /** Resolves once every leave sent so far has settled (each is bounded by a command timeout). */
  settled(): Promise<void> {
    return this.leaving.settled();
  }
}
