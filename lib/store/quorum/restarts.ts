import type { RedisClientPort } from '../client/redis-client.js';
import type { ServerStart } from '../scripts/acquire.js';
import { withTimeout } from '../../util/timeout.js';

const now = () => performance.now();

/**
 * Redlock's "delayed restart", done by the client: a master that restarted (a new
 * run_id after a reconnect) has lost every key, so for one lease after its start it
 * could grant a lock that a majority including it granted someone else just before.
 * Until then it sits out of quorum votes. A restart this client saw (new run_id after
 * a reconnect) counts; so does a master younger than one lease while a majority of
 * its peers are older (Quorum decides that: a client started after the restart), but
 * not a whole deployment started together. A restart the connection did not show (a
 * proxy kept it up, or the client library reconnected without a word) is found by the
 * client's mark on the server: each acquire that finds it missing answers with the
 * server's run_id and uptime (acquire.lua), which met() reads as INFO's.
 */
export class RestartWatch {
  private runId: string | undefined;
  /** Monotonic time until which the master sits out; 0 when it doesn't. */
  private until = 0;
  /** A reconnect whose run_id is not known yet: sit out until INFO answers (after a failed INFO, until the next 'ready' checks again). */
  private checking = false;
  /** That check's INFO while it is out (never rejects): a ballot waits for it, bounded, rather than count the master out. */
  private checkOut: Promise<void> | undefined;
  /** Monotonic time the server started (from its uptime); -Infinity until known. */
  startedAt = -Infinity;
  /** Settles once the first INFO answered or failed (a down master never answers). */
  readonly known: Promise<void>;
  private settleKnown: () => void = () => undefined;
  private readonly offReady: () => void;

  constructor(
    private readonly connection: RedisClientPort,
    private readonly sitOut: number,
    /** This client's mark on the server (acquire.lua's KEYS[3]): `<keyPrefix>met:<client id>`. */
    readonly mark: string,
  ) {
    this.known = new Promise((resolve) => (this.settleKnown = resolve));
    this.offReady = connection.onReady(() => this.check());
    if (connection.ready) this.check();
  }

  /** Settles once the restart check under way (a reconnect's INFO) has answered or failed; undefined when none is out. */
  get checked(): Promise<void> | undefined {
    return this.checkOut;
  }

  /** Milliseconds this master still sits out (0: it votes). */
  get remaining(): number {
    if (this.checking) return this.sitOut;
    return Math.max(0, this.until - now());
  }

  close(): void {
    this.offReady();
  }

  /**
   * What an acquire's reply told of the server when this client's mark was missing:
   * read as INFO is, before the reply's grant is counted (the quorum's ballot asks
   * SitOut once this returned).
   */
  met(start: ServerStart): void {
    this.learn(start.runId, start.uptime);
  }

  private check(): void {
    const known = this.runId !== undefined;
    if (known) this.checking = true;
    const out = this.connection.info('server').then(
      (info) => {
        this.checking = false;
        this.learn(/run_id:(\w+)/.exec(info)?.[1], Number(/uptime_in_seconds:(\d+)/.exec(info)?.[1] ?? 0) * 1_000);
        this.settleKnown();
      },
      () => {
        // Unanswered: the client reconnects and 'ready' checks again; meanwhile it sits out.
        this.settleKnown();
      },
    );
    if (!known) return;
    this.checkOut = out;
    void out.then(() => {
      if (this.checkOut === out) this.checkOut = undefined;
    });
  }

  /** A run_id and uptime (ms) read from the server: a new run_id is a restart. */
  private learn(runId: string | undefined, uptime: number): void {
    // uptime_in_seconds is the difference of two whole-second clocks: a server up for
    // 30 ms can say 1. Take the latest start it allows, or a restart would sit out
    // up to a second too little.
    this.startedAt = now() - Math.max(0, uptime - 1_000);
    if (runId && this.runId !== undefined && runId !== this.runId) this.until = this.startedAt + this.sitOut;
    this.runId = runId ?? this.runId;
  }
}

/** What SitOut reads of a master. */
interface Watched {
  readonly down: boolean;
  readonly restarts?: RestartWatch;
}

/**
 * Which masters of a quorum sit out: a restart seen (RestartWatch.remaining), or a
 * master younger than one sit-out while a majority of its peers are older (a restart
 * before this client knew the master). A whole deployment started together is not held
 * back: then fewer than a majority are older.
 */
export class SitOut {
  private ages: Promise<void> | undefined;
  private agesKnown = false;

  constructor(
    private readonly masters: readonly Watched[],
    /** The longest lease a restarted master must sit out. */
    private readonly sitOut: number,
    private readonly quorum: number,
  ) {}

  /**
   * undefined once every master's age is known (or could not be); until then a promise
   * of it, bounded: a client started just after a restart must already keep the young
   * master out of its first acquisition.
   */
  ready(): Promise<void> | undefined {
    if (this.agesKnown) return undefined;
    const known = () => void (this.agesKnown = true);
    this.ages ??= withTimeout(Promise.all(this.masters.filter((m) => !m.down).map((m) => m.restarts?.known)), 500, 'INFO').then(known, known);
    return this.ages;
  }

  /** Settles once master i's restart check under way has answered or failed (RestartWatch.checked); undefined when none is out. */
  checked(i: number): Promise<void> | undefined {
    return this.masters[i].restarts?.checked;
  }

  /** Milliseconds master i still sits out (0: it votes). */
  left(i: number): number {
    const t = now();
    const restarts = this.masters[i].restarts;
    const seen = restarts?.remaining ?? 0;
    const young = this.youngFor(restarts, t);
    if (young <= 0) return seen;
    let old = 0;
    for (const m of this.masters) if (this.youngFor(m.restarts, t) <= 0) old += 1;
    return Math.max(seen, old >= this.quorum ? young : 0);
  }

  /** How much longer a master started at restarts.startedAt counts as young. */
  private youngFor(restarts: RestartWatch | undefined, t: number): number {
    return (restarts?.startedAt ?? -Infinity) + this.sitOut - t;
  }
}
