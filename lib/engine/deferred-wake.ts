import type { LockKeys } from '../store/types.js';
import type { WaitHost } from './request.js';

/** Keys remembered as eager at most (the oldest is forgotten first): a bound, not a cache to tune. */
const EAGER_KEYS = 1_000;

/**
 * Keys whose last release by this client woke nobody (a waiting client's turn is still
 * to come), until this client either takes the lock again (cancel) or, in the next turn
 * of the event loop, wakes that client: the free lock never idles while it sleeps until
 * its turn.
 *
 * A key whose deferred wake-up went out (this client did not take the lock again at
 * once: it pauses between sections) becomes eager: its next releases wake the head in
 * the release call itself (wakesHead), one round trip less each, until this client
 * takes the lock again at once after such a release (its waiter was woken for nothing),
 * which makes the key deferring again.
 */
export class DeferredWakes {
  private readonly unwoken = new Map<string, LockKeys>();
  /** Keys whose releases wake the head at once (insertion order: oldest first). */
  private readonly eager = new Set<string>();
  /** Eager keys released since the last turn of the event loop. */
  private readonly releasedEagerly = new Set<string>();
  private scheduled = false;

  constructor(private readonly host: WaitHost) {}

  /** This client goes for the lock at key: the deferred wake-up is not needed. */
  cancel(key: string): void {
    if (this.unwoken.size > 0) this.unwoken.delete(key);
    if (this.releasedEagerly.delete(key)) this.eager.delete(key);
  }

  /** Whether a last release of key wakes the waiting list's head though its turn has not come. */
  wakesHead(key: string): boolean {
    return this.eager.has(key);
  }

  /** A last release of key woke the head at once (wakesHead): a lock() before the next turn of the event loop undoes that. */
  wokeHead(key: string): void {
    this.releasedEagerly.add(key);
    this.schedule();
  }

  /** A release woke nobody: unless this client takes the lock again at once, wake the list's head. */
  defer(keys: LockKeys): void {
    if (!this.host.store.waitingList) return;
    this.unwoken.set(keys.id, keys);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // After the caller's continuation (a lock() right after unlock() sends its attempt
    // within the same microtask queue).
    setImmediate(() => {
      this.scheduled = false;
      this.releasedEagerly.clear();
      const list = this.host.store.waitingList;
      if (!list) return;
      for (const k of this.unwoken.values()) {
        list.wake(k, this.host.timeoutFor(list.entryLease)).catch((error: unknown) => this.host.closed || this.host.error(error));
        this.eager.add(k.id);
        if (this.eager.size > EAGER_KEYS) this.eager.delete(this.eager.values().next().value!);
      }
      this.unwoken.clear();
    });
  }
}
