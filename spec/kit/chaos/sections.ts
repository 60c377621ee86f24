/**
 * What a chaos worker's tasks do (worker.ts runs them): take locks with run() over and
 * over, hold them for short random times, write to the fenced register while holding
 * them, and log every step (history.ts reads the log). Every choice comes from the
 * worker's seeded generator.
 */
import { LockLostError, LockTimeoutError, LockUnavailableError, type AcquiredEvent, type LockClient } from '../../../lib';
import { commandBound } from '../../../lib/options';
import type { LogRecord, WaitKind } from './history';
import type { Rng } from './prng';
import type { FencedRegister } from './register';

export interface SectionsConfig {
  worker: number;
  gen: number;
  locks: string[];
  /** A semaphore the tasks also take permits of (1 to 3 at a time), in about a third of their turns. */
  semaphore?: { name: string; limit: number };
  /** Read-write locks: each section reads (most) or writes; readers write nothing to the register. */
  readWrite?: boolean;
  /** The sections take fair locks (getFairLock) instead of getLock. */
  fair?: boolean;
  /** In about a third of their turns the tasks take a multi-lock over two of `locks`, logged as one section per name. */
  multi?: boolean;
  /** The client's watchdogTimeout, ms: a quarter of the turns take a fixed lease of 1 to 3 times it instead of the watchdog. */
  watchdogTimeout: number;
  /**
   * Quorum mode: how long a restarted master sits out (the client's watchdogTimeout plus
   * a quarter, at least 100 ms). Fixed leases stay within it, the configuration in which
   * one master's empty restart cannot let a second holder in (a longer lease is warned of:
   * HOLDFAST_LEASE_OVER_SITOUT); and a wait may end two command bounds past its budget,
   * since a failed attempt settles only after its minority grants are given back.
   */
  quorumSitOut?: number;
  /** The client's syncReplicas: its WAIT timeout adds to the bound of each call. */
  syncReplicas?: { min: number; timeout: number };
}

export interface SectionsContext {
  config: SectionsConfig;
  locks: LockClient;
  rng: Rng;
  register: FencedRegister | undefined;
  log(record: LogRecord): void;
  note(text: string): void;
  trace: boolean;
  lastAcquired(): string;
  /** Sections of each lock this worker is in right now (reentries not counted). */
  active: Map<string, number>;
  stopping(): boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
type Side = 'lock' | 'read' | 'write';

export function sections(ctx: SectionsContext) {
  const { config, locks, rng, log, note, trace, active } = ctx;
  const pid = process.pid;
  let holdSeq = 0;

  /**
   * A fixed lease (no watchdog) in a quarter of the turns: its hold must be reported lost
   * when the lease ends, however the grant came (a message, a later attempt, a reply).
   */
  const leaseTime = (): number | undefined => (rng.next() < 0.25 ? rng.int(config.watchdogTimeout, Math.min(config.watchdogTimeout * 3, config.quorumSitOut ?? Infinity)) : undefined);
  /** Half the holds with a fixed lease run until about its end (70 to 130 %): the loss must be reported before anyone else gets in. */
  const holdFor = (lease: number | undefined): number => (lease !== undefined && rng.next() < 0.5 ? rng.int(Math.round(lease * 0.7), Math.round(lease * 1.3)) : holdTime());

  /** How long to stay in a critical section: mostly short, sometimes across renewals. */
  const holdTime = (): number => {
    const r = rng.next();
    if (r < 0.6) return rng.int(2, 40);
    if (r < 0.85) return rng.int(40, 300);
    return rng.int(300, 2_000);
  };

  /** One guarded write: logged (the in-process fenced model), then sent to the register unless the signal says the hold is gone. */
  const write = async (id: string, name: string, token: number, signal: AbortSignal): Promise<void> => {
    log({ type: 'w', id, at: Date.now() });
    if (!ctx.register || signal.aborted) return;
    const sent = Date.now();
    const ok = await ctx.register.write(name, token).catch(() => undefined);
    if (ok !== undefined) log({ type: 'reg', id, sent, at: Date.now(), ok });
  };

  /** How a wait ended: one of the outcomes the contract allows, or 'other' (a violation). */
  const waitOutcome = (error: unknown): { outcome: 'timeout' | 'unavailable' | 'other'; error?: string } => {
    if (error instanceof LockTimeoutError) return { outcome: 'timeout' };
    if (error instanceof LockUnavailableError) return { outcome: 'unavailable' };
    return { outcome: 'other', error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  };

  /** The command bound of a wait's calls (the client's, for its lease; with syncReplicas, its WAIT too): DESIGN lets a wait end this far past its budget. */
  const boundOf = (lease: number | undefined): number => (config.quorumSitOut ? 2 : 1) * commandBound(lease ?? config.watchdogTimeout, undefined) + (config.syncReplicas?.timeout ?? 0);
  /**
   * A multi-lock's (MultiLock's doc): its attempts, one per name left once the budget is
   * spent, and the re-lease of a fixed leaseTime share one bound past the budget; a take
   * that ends without every name settles after giving back what it took, every name at
   * once: one bound more, a name's under the watchdog's lease if that one is longer.
   */
  const multiBoundOf = (lease: number | undefined): number => boundOf(lease) + Math.max(boundOf(lease), boundOf(undefined));

  const logWait = (kind: WaitKind, lock: string, start: number, budget: number, lease: number | undefined, error: unknown, bound = boundOf(lease)): void => {
    log({ type: 'wait', worker: config.worker, pid, kind, lock, start, at: Date.now(), budget, bound, ...waitOutcome(error) });
  };

  /** The Lock a section takes: the lock (fair with --fair), or a side of the read-write lock of that name. */
  const handle = (name: string, side: Side) => {
    if (side === 'lock') return config.fair ? locks.getFairLock(name) : locks.getLock(name);
    const rw = locks.getReadWriteLock(name);
    return side === 'read' ? rw.readLock() : rw.writeLock();
  };

  interface Slot {
    id?: string;
    /** When fn began: the wait's end. */
    at?: number;
  }

  /** The critical section: log the acquisition, write (fenced) until done or lost, log the end. */
  const section = async (slot: Slot, side: Side, lockName: string, task: number, signal: AbortSignal, token: number, inner?: () => Promise<void>, permits?: number, lease?: number): Promise<void> => {
    const id = `${config.worker}.${config.gen}.${task}.${++holdSeq}`;
    slot.id = id;
    active.set(lockName, (active.get(lockName) ?? 0) + 1);
    const start = Date.now();
    slot.at = start;
    log({ type: 'acq', id, worker: config.worker, pid, task, lock: lockName, token, start, ...(side === 'lock' ? {} : { side }), ...(permits === undefined ? {} : { permits }), ...(lease === undefined ? {} : { lease }) });
    // A reader (and a semaphore's holder) acts but writes nothing to the register.
    const writes = side !== 'read' && permits === undefined;
    const act = async () => (writes ? write(id, lockName, token, signal) : log({ type: 'act', id, at: Date.now() }));
    if (trace) note(`trace section ${id} ${lockName} owner ${ctx.lastAcquired()}`);
    const onAbort = () => {
      const reason = signal.reason instanceof LockLostError ? signal.reason.reason : String(signal.reason);
      log({ type: 'lost', id, at: Date.now(), reason });
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      // First write at once: a successor's write fences off everything its predecessor writes later.
      await act();
      const until = start + holdFor(lease);
      // Sometimes reenter the same lock (a nested service method): its lock and unlock
      // must change nothing for other owners, even when a reply is lost and resent.
      let reenter = permits === undefined && rng.next() < 0.2;
      while (!signal.aborted && Date.now() < until) {
        await sleep(rng.int(1, 25));
        if (signal.aborted) break;
        await act();
        if (reenter) {
          reenter = false;
          // A writer sometimes reenters by reading (its scope may), and reads on.
          const inside = side === 'write' && rng.next() < 0.5 ? 'read' : side;
          await handle(lockName, inside)
            .run(async () => {
              await sleep(rng.int(1, 20));
              if (!signal.aborted) await act();
            })
            .catch((e: Error) => void (trace && note(`trace inner ${id} ${lockName}: ${e.message}`))); // a loss shows on the outer section's signal
        }
      }
      if (inner && !signal.aborted) await inner();
    } finally {
      log({ type: 'end', id, at: Date.now() });
    }
  };

  const outcomeOf = (error: unknown): 'lost' | 'error' => (error instanceof LockLostError ? 'lost' : 'error');

  /** lock.run(section), then the outcome line; false when the lock was not acquired. */
  const hold = async (name: string, t: number, waitTime: number, inner?: () => Promise<void>): Promise<boolean> => {
    const slot: Slot = {};
    // Read-mostly, as read-write locks are used.
    const side: Side = !config.readWrite ? 'lock' : rng.next() < 0.7 ? 'read' : 'write';
    const kind: WaitKind = side === 'lock' ? (config.fair ? 'fair' : 'lock') : side;
    const called = Date.now();
    const lease = leaseTime();
    try {
      await handle(name, side).run(async ({ signal, token }) => section(slot, side, name, t, signal, token, inner, undefined, lease), { waitTime, leaseTime: lease });
      if (slot.id) log({ type: 'rel', id: slot.id, at: Date.now(), outcome: 'released' });
    } catch (e) {
      // No id: the lock was never acquired (wait ran out, Redis unreachable).
      if (slot.id) log({ type: 'rel', id: slot.id, at: Date.now(), outcome: outcomeOf(e), error: (e as Error).message });
      else logWait(kind, name, called, waitTime, lease, e);
    } finally {
      // Counted from the section's start until run() has released (or lost) the lock.
      if (slot.id) active.set(name, active.get(name)! - 1);
    }
    if (slot.at !== undefined) log({ type: 'wait', worker: config.worker, pid, kind, lock: name, start: called, at: slot.at, budget: waitTime, bound: boundOf(lease), outcome: 'held' });
    return slot.id !== undefined;
  };

  /** sem.run(section) with 1 to 3 permits, then the outcome line; false when the permits were not acquired. */
  const holdPermits = async (sem: { name: string; limit: number }, t: number, waitTime: number): Promise<boolean> => {
    const slot: Slot = {};
    const permits = rng.int(1, 3);
    const called = Date.now();
    try {
      await locks.getSemaphore(sem.name, sem.limit).run(async ({ signal }) => section(slot, 'lock', sem.name, t, signal, 0, undefined, permits), { permits, waitTime });
      if (slot.id) log({ type: 'rel', id: slot.id, at: Date.now(), outcome: 'released' });
    } catch (e) {
      if (slot.id) log({ type: 'rel', id: slot.id, at: Date.now(), outcome: outcomeOf(e), error: (e as Error).message });
      else logWait('semaphore', sem.name, called, waitTime, undefined, e);
    } finally {
      if (slot.id) active.set(sem.name, active.get(sem.name)! - 1);
    }
    if (slot.at !== undefined) log({ type: 'wait', worker: config.worker, pid, kind: 'semaphore', lock: sem.name, start: called, at: slot.at, budget: waitTime, bound: boundOf(undefined), outcome: 'held' });
    return slot.id !== undefined;
  };

  /**
   * getMultiLock([a, b]).run() over two distinct names in random order, logged as one
   * section per name (each with that name's token and fenced writes), so the per-name
   * checks hold it to the invariant: no other section of either name overlaps it.
   * The run's signal is the holder's one notice of a loss of any name, and it stops
   * acting on every name then: so the abort is logged as a loss on each section.
   * A name's section starts at its grant (its 'acquired' event, matched by token), not
   * when the last name came: the names are taken one by one, and each is held, so must
   * exclude everyone else, from its own grant on (a restart may fall in between).
   */
  const holdMulti = async (t: number, waitTime: number): Promise<boolean> => {
    const pool = [...config.locks];
    const names = [0, 1].map(() => pool.splice(rng.int(0, pool.length - 1), 1)[0]!);
    const ids: string[] = [];
    // Active from the call on: a name taken first is held (and renewed) while the next is
    // awaited, which is no ghost. One taken and not given back still shows after the call.
    for (const name of names) active.set(name, (active.get(name) ?? 0) + 1);
    const granted = new Map<string, number>();
    const onGrant = (e: AcquiredEvent) => void (e.kind === 'multi' && names.includes(e.name) && granted.set(`${e.name} ${e.token}`, Date.now()));
    locks.on('acquired', onGrant);
    const called = Date.now();
    const lease = leaseTime();
    let began: number | undefined;
    try {
      await locks.getMultiLock(names).run(async ({ signal, tokens }) => {
        const start = Date.now();
        began = start;
        locks.off('acquired', onGrant);
        for (const name of names) {
          ids.push(`${config.worker}.${config.gen}.${t}.${++holdSeq}`);
          const grant = granted.get(`${name} ${tokens[name]}`) ?? start;
          log({ type: 'acq', id: ids[ids.length - 1]!, worker: config.worker, pid, task: t, lock: name, token: tokens[name]!, start: grant, with: names.filter((n) => n !== name), ...(lease === undefined ? {} : { lease }) });
        }
        const onAbort = () => {
          const reason = signal.reason instanceof LockLostError ? `${signal.reason.lockName} ${signal.reason.reason}` : String(signal.reason);
          for (const id of ids) log({ type: 'lost', id, at: Date.now(), reason });
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
        const writeAll = () => Promise.all(ids.map((id, i) => write(id, names[i]!, tokens[names[i]!]!, signal)));
        try {
          await writeAll();
          const until = start + holdFor(lease);
          while (!signal.aborted && Date.now() < until) {
            await sleep(rng.int(1, 25));
            if (!signal.aborted) await writeAll();
          }
        } finally {
          for (const id of ids) log({ type: 'end', id, at: Date.now() });
        }
      }, { waitTime, leaseTime: lease });
      for (const id of ids) log({ type: 'rel', id, at: Date.now(), outcome: 'released' });
    } catch (e) {
      for (const id of ids) log({ type: 'rel', id, at: Date.now(), outcome: outcomeOf(e), error: (e as Error).message });
      if (ids.length === 0) logWait('multi', names.join('+'), called, waitTime, lease, e, multiBoundOf(lease));
    } finally {
      locks.off('acquired', onGrant);
      for (const name of names) active.set(name, active.get(name)! - 1);
    }
    if (began !== undefined) log({ type: 'wait', worker: config.worker, pid, kind: 'multi', lock: names.join('+'), start: called, at: began, budget: waitTime, bound: multiBoundOf(lease), outcome: 'held' });
    return ids.length > 0;
  };

  const task = async (t: number): Promise<void> => {
    const [main, ...others] = config.locks;
    while (!ctx.stopping()) {
      if (config.multi && rng.next() < 0.33) {
        await sleep((await holdMulti(t, 1_500)) ? rng.int(0, 15) : rng.int(5, 30));
        continue;
      }
      if (config.semaphore && rng.next() < 0.35) {
        await sleep((await holdPermits(config.semaphore, t, 1_500)) ? rng.int(0, 15) : rng.int(5, 30));
        continue;
      }
      const r = rng.next();
      const name = r < 0.65 || others.length === 0 ? main! : rng.pick(others);
      // Sometimes a second lock inside the first (always main -> others[0]: no lock-order deadlock).
      const nested = name === main && others.length > 0 && rng.next() < 0.15 ? others[0]! : undefined;
      const took = await hold(name, t, 1_500, nested ? async () => void (await hold(nested, t, 300)) : undefined);
      await sleep(took ? rng.int(0, 15) : rng.int(5, 30));
    }
  };

  return { task };
}
