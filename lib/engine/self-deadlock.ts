import type { AcquireRequest } from './request.js';

/** A wait the watch follows. */
export interface Watchable {
  readonly request: AcquireRequest;
}

const now = () => performance.now();

/**
 * How long a wait made outside every scope may be held up by another owner of this
 * client before the warning: half a second, leaving the other half for timers that a
 * loaded host runs late, so that the warning comes within a second of waiting.
 */
export const SELF_DEADLOCK_WARNING_AFTER = 500;

/** Names already warned about, remembered up to this many (names used once must not pile up). */
const REMEMBERED_NAMES = 1_000;

/** The watched waits of one key. */
interface Watched {
  readonly name: string;
  /** In arrival order: the first is the one that has waited longest. */
  readonly waiters: Set<Watchable>;
  /** When the lock last changed hands in this client (or the watch began): the clock starts again. */
  since: number;
}

/**
 * Warns (once per lock name) about a wait that looks like the silent self-deadlock:
 * a call made outside every scope that has waited SELF_DEADLOCK_WARNING_AFTER ms while
 * another owner of this very client held the lock all along, without handing it on.
 * That is what `await lock.lock(); await inner()` looks like when inner() calls lock()
 * too: outside a scope each call is its own owner, so the inner one waits for the
 * outer one, which waits for it, and the watchdog keeps the outer hold alive forever.
 *
 * Why a warning and not a rejection: nothing tells, cheaply and for sure, that the
 * holder is the waiter's own caller. The only link is the caller's continuation, and a
 * callee can mark it only with AsyncLocalStorage.enterWith, which marks the sibling
 * tasks started in the same synchronous run as well (Promise.all of independent tasks,
 * exactly the case that must keep working); tracing async ancestry needs an async_hooks
 * init hook on every promise in the process. So independent tasks outside any scope
 * that hold the lock longer than the threshold while another waits get the warning too
 * (once per name); they still simply wait for each other.
 *
 * Costs nothing on the uncontended path: it sees only waits that queue. A wait in a
 * scope costs one check; outside, one set entry. One timer per client, armed only
 * while such waits exist, and unref'd.
 */
export class SelfDeadlockWatch {
  private readonly watched = new Map<string, Watched>();
  private readonly warned = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** A live hold on key by an owner of this client other than owner. */
    private readonly heldByOther: (key: string, owner: string) => boolean,
  ) {}

  /** A wait made outside every scope has queued. */
  watch(waiter: Watchable): void {
    const { key, name } = waiter.request.keys;
    if (this.warned.has(name)) return;
    let entry = this.watched.get(key);
    if (!entry) this.watched.set(key, (entry = { name, waiters: new Set(), since: now() }));
    entry.waiters.add(waiter);
    // An armed timer is due no later than this waiter (see check), so arm only when idle.
    if (!this.timer) this.arm(SELF_DEADLOCK_WARNING_AFTER);
  }

  /** The wait ended (granted, timed out, aborted, rejected). */
  forget(waiter: Watchable): void {
    if (this.watched.size === 0) return;
    const { key } = waiter.request.keys;
    const entry = this.watched.get(key);
    if (!entry?.waiters.delete(waiter) || entry.waiters.size > 0) return;
    this.watched.delete(key);
    if (this.watched.size === 0) this.disarm();
  }

  /** A hold on key ended in this client (released, lost, handed on): the lock is moving. */
  changed(key: string): void {
    if (this.watched.size === 0) return;
    const entry = this.watched.get(key);
    if (entry) entry.since = now();
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), Math.max(1, Math.ceil(ms)));
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Warns for every key whose longest waiter has been held up long enough by a local
   * owner, then re-arms for the next one due. A key held by nobody here (another
   * process, or free for a moment) starts its clock again.
   */
  private check(): void {
    this.timer = undefined;
    const t = now();
    let next = Infinity;
    for (const [key, entry] of this.watched) {
      const oldest = entry.waiters.values().next().value as Watchable;
      const due = Math.max(entry.since, oldest.request.start) + SELF_DEADLOCK_WARNING_AFTER;
      // A timer may fire a little before performance.now() reaches its target.
      if (due > t + 1) {
        next = Math.min(next, due);
        continue;
      }
      if (!this.heldByOther(key, oldest.request.owner)) {
        entry.since = t;
        next = Math.min(next, t + SELF_DEADLOCK_WARNING_AFTER);
        continue;
      }
      this.watched.delete(key);
      this.warn(entry.name, t - oldest.request.start);
    }
    if (next < Infinity) this.arm(next - t);
  }

  private warn(name: string, waited: number): void {
    if (this.warned.size >= REMEMBERED_NAMES) this.warned.delete(this.warned.values().next().value as string);
    this.warned.add(name);
    process.emitWarning(
      `lock '${name}' has been waited for ${Math.round(waited)} ms outside every scope, held all along by another owner in this process. ` +
        'If that owner is the caller itself (a nested lock() under an outer lock() of the same name), the wait never ends: outside locks.scope() each lock() is its own owner. ' +
        'Run the work in locks.scope(fn), or one scope per request with app.use(expressScope(locks)), koaScope(locks) or fastifyScope(locks), so nested calls reenter. ' +
        '(Independent tasks that hold the lock this long see this too, once per name.)',
      { type: 'HoldfastWarning', code: 'HOLDFAST_SELF_DEADLOCK' },
    );
  }
}
