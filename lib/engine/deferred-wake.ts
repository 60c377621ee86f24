import type { LockKeys } from '../store/types.js';
import type { WaitHost } from './request.js';

/**
 * Keys whose last release by this client woke nobody (a waiting client's turn is still
 * to come), until this client either takes the lock again (cancel) or, in the next turn
 * of the event loop, wakes that client: the free lock never idles while it sleeps until
 * its turn.
 */
export class DeferredWakes {
  private readonly unwoken = new Map<string, LockKeys>();
  private scheduled = false;

  constructor(private readonly host: WaitHost) {}

  /** This client goes for the lock at key: the deferred wake-up is not needed. */
  cancel(key: string): void {
    if (this.unwoken.size > 0) this.unwoken.delete(key);
  }

  /** A release woke nobody: unless this client takes the lock again at once, wake the list's head. */
  defer(keys: LockKeys): void {
    const list = this.host.store.waitingList;
    if (!list) return;
    this.unwoken.set(keys.id, keys);
    if (this.scheduled) return;
    this.scheduled = true;
    // After the caller's continuation (a lock() right after unlock() sends its attempt
    // within the same microtask queue).
    setImmediate(() => {
      this.scheduled = false;
      for (const k of this.unwoken.values()) list.wake(k, this.host.timeoutFor(list.entryLease)).catch((error: unknown) => this.host.closed || this.host.error(error));
      this.unwoken.clear();
    });
  }
}
