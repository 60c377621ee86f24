/**
 * A TCP proxy between a client and a Redis, to simulate network faults that
 * stopping the server cannot: a partition where sockets stay open but nothing
 * arrives (blackhole), an abrupt reset (drop), a host that rejects connections
 * (refuse), a slow network (latency).
 */
import net, { type AddressInfo } from 'node:net';

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  /** One side closed while blackholed: the other side learns it at resume(). */
  halfDead: boolean;
  /** Server replies kept back by delayReplies(), in order, until deliverReplies(). */
  held: Buffer[];
  /** Chunks in flight under latency(), per direction, in order, with the time each is due. */
  late: Map<net.Socket, { due: number; chunk: Buffer }[]>;
}

export class TcpProxy {
  private readonly pairs = new Set<Pair>();
  private stalled = false;
  private repliesLost = false;
  private delaying = false;
  /** Upstream local ports whose replies alone delayReplies(ports) keeps back; undefined: every connection's. */
  private delayedPorts: Set<number> | undefined;
  /** Reply chunks still to forward before loseReplies() takes effect (loseRepliesAfter). */
  private repliesToPass: number | undefined;
  private refusing = false;
  /** Milliseconds every chunk waits before it is forwarded, either way (latency()). */
  private delayMs = 0;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly server: net.Server,
    private target: { host: string; port: number },
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  static start(target: { host: string; port: number }): Promise<TcpProxy> {
    return new Promise((resolve, reject) => {
      const server = net.createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve(new TcpProxy(server, target));
      });
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Client connections currently open through the proxy. */
  get connections(): number {
    return this.pairs.size;
  }

  /**
   * Local ports of the upstream sockets: how the server (CLIENT LIST addr=) sees the
   * connections that went through this proxy.
   */
  get upstreamPorts(): number[] {
    return [...this.pairs].flatMap((p) => (p.upstream.localPort === undefined ? [] : [p.upstream.localPort]));
  }

  /**
   * Stalls every connection, current and new: sockets stay open, nothing is
   * forwarded either way, and closes are not propagated. Bytes are still read
   * (and thrown away) so the sender never sees back-pressure, as with packets
   * lost on the wire.
   */
  blackhole(): void {
    this.stalled = true;
  }

  /**
   * Forwards commands but throws the server's replies away, until resume(): the server
   * carries out requests whose answers never arrive (a lost reply path). Follow with
   * drop(): the client then resends what went unanswered.
   */
  loseReplies(): void {
    this.repliesLost = true;
  }

  /**
   * Forwards commands but keeps the server's replies back, in order, until
   * deliverReplies(): the server has carried out a request whose answer is late.
   * `ports`: only the connections whose upstream side has one of these local ports
   * (as `ports` lists them, and the server's CLIENT LIST shows them).
   */
  delayReplies(ports?: number[]): void {
    this.delaying = true;
    this.delayedPorts = ports && new Set(ports);
  }

  /** Sends on the replies delayReplies() kept back, and forwards as before. */
  deliverReplies(): void {
    this.delaying = false;
    this.delayedPorts = undefined;
    for (const pair of this.pairs) {
      for (const chunk of pair.held.splice(0)) if (!pair.client.destroyed) pair.client.write(chunk);
    }
  }

  /**
   * Forwards the server's next `n` reply chunks, then loses replies as loseReplies()
   * does. A client that sends a command only once the previous reply is in (holdfast's
   * give-back after a late grant) gets each reply in a chunk of its own, so this loses
   * the reply of one chosen call in a sequence.
   */
  loseRepliesAfter(n: number): void {
    this.repliesToPass = n;
  }

  /**
   * Forwards again (after blackhole(), loseReplies() or delayReplies()). What was sent during the blackhole is gone, so a
   * connection that lost part of a request/reply stream is out of step
   * (replies no longer match commands): use drop() for those, or new connections.
   */
  resume(): void {
    this.stalled = false;
    this.repliesLost = false;
    this.repliesToPass = undefined;
    this.deliverReplies();
    for (const pair of [...this.pairs]) {
      if (pair.halfDead) this.destroy(pair, 'close');
    }
  }

  /**
   * Destroys every current connection; keeps listening. 'reset' (default)
   * sends RST to the client, like a network failure; 'close' sends FIN, like
   * a server closing the connection.
   */
  drop(how: 'reset' | 'close' = 'reset'): void {
    for (const pair of [...this.pairs]) this.destroy(pair, how);
  }

  /**
   * Delays every chunk, either way and on every connection, by `ms` (0: no more delay);
   * order is kept, and a chunk never overtakes one still waiting when the delay drops.
   */
  latency(ms: number): void {
    this.delayMs = ms;
  }

  /**
   * While on, new connections are accepted and reset at once (the client sees
   * ECONNRESET rather than ECONNREFUSED: the port stays ours meanwhile).
   */
  refuse(on: boolean): void {
    this.refusing = on;
  }

  /**
   * Points the proxy at another server, for new connections and for the current ones:
   * each client socket stays open and is joined to a new connection to `target`, so
   * the client sees nothing (a server replaced behind a proxy or a load balancer). Call
   * it between commands: bytes in flight are lost.
   */
  retarget(target: { host: string; port: number }): Promise<void> {
    this.target = target;
    return Promise.all(
      [...this.pairs].map((pair) => {
        pair.client.pause();
        pair.client.removeAllListeners('data');
        pair.upstream.removeAllListeners();
        pair.upstream.on('error', () => undefined);
        pair.upstream.destroy();
        return new Promise<void>((resolve) => {
          this.join(pair, resolve);
          this.forward(pair, pair.client, pair.upstream);
        });
      }),
    ).then(() => undefined);
  }

  close(): Promise<void> {
    this.closing ??= new Promise((resolve) => {
      this.server.close(() => resolve());
      this.drop('close');
    });
    return this.closing;
  }

  private accept(client: net.Socket): void {
    if (this.refusing || this.closing) {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    // Paused until upstream is connected, so the first command is not lost.
    client.pause();
    const pair: Pair = { client, upstream: client, halfDead: false, held: [], late: new Map() };
    this.pairs.add(pair);
    // Errors end up as 'close' below; listeners stop them from being thrown.
    client.on('error', () => undefined);
    client.once('close', () => this.closed(pair));
    this.join(pair);
    this.forward(pair, client, pair.upstream);
  }

  /** Connects pair's client to a new upstream socket: replies flow once it is connected. */
  private join(pair: Pair, connected?: () => void): void {
    const upstream = net.createConnection({ host: this.target.host, port: this.target.port });
    pair.upstream = upstream;
    upstream.on('error', () => undefined);
    upstream.once('connect', () => {
      pair.client.resume();
      connected?.();
    });
    this.forward(pair, upstream, pair.client);
    upstream.once('close', () => pair.upstream === upstream && this.closed(pair));
  }

  /** One side of pair closed. */
  private closed(pair: Pair): void {
    if (!this.pairs.has(pair)) return;
    // A partition hides the close as well: the peer only notices later.
    if (this.stalled) pair.halfDead = true;
    else this.destroy(pair, 'close');
  }

  private forward(pair: Pair, from: net.Socket, to: net.Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (from === pair.upstream && this.repliesToPass !== undefined && !this.stalled) {
        if (this.repliesToPass === 0) {
          this.repliesToPass = undefined;
          this.repliesLost = true;
        } else this.repliesToPass -= 1;
      }
      if (this.stalled || pair.halfDead || to.destroyed || (this.repliesLost && from === pair.upstream)) return; // discarded, like lost packets
      if (this.delaying && from === pair.upstream && (!this.delayedPorts || this.delayedPorts.has(pair.upstream.localPort ?? -1))) return void pair.held.push(chunk);
      const late = pair.late.get(to);
      if (this.delayMs > 0 || late) {
        const queue = late ?? [];
        if (!late) pair.late.set(to, queue);
        queue.push({ due: Date.now() + this.delayMs, chunk });
        if (queue.length === 1) this.flushLate(pair, from, to, queue);
        return;
      }
      this.write(from, to, chunk);
    });
  }

  private write(from: net.Socket, to: net.Socket, chunk: Buffer): void {
    if (!to.write(chunk)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  }

  /** Forwards the delayed chunks as they fall due; the queue goes once it is empty. */
  private flushLate(pair: Pair, from: net.Socket, to: net.Socket, queue: { due: number; chunk: Buffer }[]): void {
    const head = queue[0];
    if (!head) {
      pair.late.delete(to);
      return;
    }
    setTimeout(() => {
      if (!this.pairs.has(pair) || to.destroyed) return;
      for (const now = Date.now(); queue.length > 0 && queue[0]!.due <= now; ) this.write(from, to, queue.shift()!.chunk);
      this.flushLate(pair, from, to, queue);
    }, Math.max(0, head.due - Date.now())).unref();
  }

  private destroy(pair: Pair, how: 'reset' | 'close'): void {
    this.pairs.delete(pair);
    if (how === 'reset' && !pair.client.destroyed) pair.client.resetAndDestroy();
    else pair.client.destroy();
    pair.upstream.destroy();
  }
}
