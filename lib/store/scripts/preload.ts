import type { Arg, CommandPort, MessageListener, PubSubEvents, PubSubPort, RedisClientPort } from '../client/redis-client.js';
import { withTimeout } from '../../util/timeout.js';
import { scriptSources } from './script.js';

/** A server's error reply ('ERR ...', 'NOPERM ...'), not a broken connection or a timeout. */
const isErrorReply = (error: unknown): boolean => error instanceof Error && /^[A-Z]{2,} /.test(error.message);

/**
 * A connection whose masters hold every script before the first call that needs it:
 * SCRIPT LOAD of the whole set when it is made (or when it first becomes ready), after
 * every reconnect, and when a call meets NOSCRIPT all the same (SCRIPT FLUSH, a
 * failover to a replica that never loaded, a master a Cluster learned of later).
 *
 * Order: calls of scripts on one connection apply in the order they were made. While
 * a load runs (the gate is set), calls made wait behind it, in the order made, and go
 * out when it answered. A NOSCRIPT starts a load unless one runs (Script then sends
 * its EVAL at once, not behind the gate). The invariant that keeps order:
 *   every call made after the first NOSCRIPT of a load's round waits behind that load,
 *   and the load opens its gate only after its reply, plus one macrotask: the server
 *   answers in order, so every call sent before the load has been answered by then,
 *   and each one that met NOSCRIPT has re-sent its EVAL (its handlers are microtasks of
 *   that reply's turn). A later call can no longer find its script loaded while an
 *   earlier one is still to be re-sent.
 * The scripts are loaded or lost together (a load sends all of them), so a call sent
 * before the load meets NOSCRIPT exactly when the earlier ones did.
 * When the gate is open (the common case) a call pays one check and nothing more.
 *
 * A load that fails or outlasts `timeout` opens the gate (a refusal by the server is
 * reported): calls then fall back to EVAL one by one (Script.run), as they would with
 * nothing preloaded; the order above then holds no more for calls still out on a
 * master that stalled past `timeout`.
 */
export class PreloadedScripts implements RedisClientPort {
  readonly library: RedisClientPort['library'];
  readonly isCluster: boolean;
  /** Set while a load runs: calls made now wait for it. */
  private gate: Promise<void> | undefined;
  private readonly offReady: () => void;
  /** Drops the listeners of untilFirstReady (and lets its waiters go). */
  private offFirst: (() => void) | undefined;
  private readonly own: CommandPort;

  constructor(
    private readonly inner: RedisClientPort,
    private readonly timeout: number,
    private readonly report: (error: Error) => void,
  ) {
    this.library = inner.library;
    this.isCluster = inner.isCluster;
    this.own = this.commands(inner);
    this.offReady = inner.onReady(() => this.load());
    if (inner.ready) this.load();
    // In its first connection (ioredis would queue calls offline and send them before it
    // says 'ready', ahead of the load): calls wait for the load its 'ready' starts, or
    // go to the library at its first break (its own offline policy then applies, and
    // NOSCRIPTs keep order as below). Any other connection not ready holds nothing here:
    // a lazy one connects at its first command, an unconnected one refuses it at once.
    else if (inner.connecting) this.untilFirstReady();
  }

  private untilFirstReady(): void {
    let offs: (() => void)[] = [];
    const gate: Promise<void> = new Promise<void>((resolve) => {
      const open = () => {
        for (const off of offs) off();
        offs = [];
        // Opened by a break (no load began): the gate goes, or every call behind it
        // would find it again, resolved, and re-check it forever (a microtask loop
        // that blocks the process: an ioredis Cluster with replicas says '-node'
        // before its first 'ready').
        if (this.gate === gate) this.gate = undefined;
        resolve();
      };
      // After the load's own listener: on 'ready' the gate is the load's by then, and
      // the waiters, checking again, wait behind it in their order.
      offs = [this.inner.onReady(open), this.inner.onBreak(open)];
      this.offFirst = open;
    });
    this.gate = gate;
  }

  private load(): void {
    const loading = withTimeout(this.inner.scriptLoad(scriptSources()), this.timeout, 'load the scripts').catch((error: unknown) => {
      // Told only when the server refused (ACL, a server without SCRIPT): a connection
      // that broke loads again at its next 'ready', and a stalled one stalls the calls
      // too, which report it themselves (acquireFailed, renewalFailed).
      if (!isErrorReply(error)) return;
      const why = error instanceof Error ? error.message : String(error);
      this.report(new Error(`holdfast: loading the scripts on Redis failed (calls fall back to EVAL): ${why}`));
    });
    // The macrotask: see the order invariant above.
    const gate = loading.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    this.gate = gate;
    // Registered before any call waits on `gate`, so it runs first when the gate opens.
    void gate.then(() => {
      if (this.gate === gate) this.gate = undefined;
    });
  }

  /** Scripts over `connection` (this one's or a pinned one), behind the gate. */
  private commands(connection: CommandPort): CommandPort {
    const evalsha = (sha: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> =>
      // Behind the gate, the call checks again: a new load may have begun meanwhile.
      this.gate ? this.gate.then(() => evalsha(sha, keys, args)) : connection.evalsha(sha, keys, args);
    return {
      evalsha,
      // Script.run sends EVAL only after NOSCRIPT: the server lost the scripts.
      eval: (lua, keys, args) => {
        if (!this.gate) this.load();
        return connection.eval(lua, keys, args);
      },
      wait: (replicas, timeout) => connection.wait(replicas, timeout),
    };
  }

  evalsha(sha: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.own.evalsha(sha, keys, args);
  }

  eval(lua: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.own.eval(lua, keys, args);
  }

  pinned<T>(fn: (connection: CommandPort) => Promise<T>): Promise<T> {
    return this.inner.pinned((connection) => fn(connection === this.inner ? this.own : this.commands(connection)));
  }

  scriptLoad(sources: readonly string[]): Promise<void> {
    return this.inner.scriptLoad(sources);
  }

  exists(key: string): Promise<number> {
    return this.inner.exists(key);
  }

  hget(key: string, field: string): Promise<string | null> {
    return this.inner.hget(key, field);
  }

  pttl(key: string): Promise<number> {
    return this.inner.pttl(key);
  }

  info(section: string): Promise<string> {
    return this.inner.info(section);
  }

  wait(replicas: number, timeout: number): Promise<number> {
    return this.inner.wait(replicas, timeout);
  }

  get ready(): boolean {
    return this.inner.ready;
  }

  get down(): boolean {
    return this.inner.down;
  }

  get connecting(): boolean {
    return this.inner.connecting;
  }

  onBreak(listener: () => void): () => void {
    return this.inner.onBreak(listener);
  }

  onReady(listener: () => void): () => void {
    return this.inner.onReady(listener);
  }

  subscriber(onMessage: MessageListener, events: PubSubEvents): PubSubPort {
    return this.inner.subscriber(onMessage, events);
  }

  close(): void {
    this.offReady();
    this.offFirst?.();
    this.inner.close();
  }
}
