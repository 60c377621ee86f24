/** The part of a socket (Node's stream.Writable) that TickWrites uses. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/** Commands per socket write at most. */
const BATCH = 16;

/**
 * Coalesces the commands one tick sends on one connection into few socket writes.
 *
 * ioredis writes every command to its socket at once: a write system call each, which
 * on loopback costs more than everything else a lock/unlock cycle does in Node (64 locks
 * cycling on one connection: ~9 of ~17 us of Node CPU per cycle). Commands pile up in a
 * tick whenever replies arrive together and their continuations send the next calls.
 *
 * A command sent while no reply is awaited on the connection goes out at once (a caller
 * that works in sequence never waits for the end of a tick, and costs nothing here). One
 * sent while replies are awaited corks the socket; it is uncorked every BATCH commands
 * and at the end of the tick (process.nextTick: after the microtasks the replies set
 * off), so they leave BATCH to a writev. Not a whole tick to one write: Redis would idle
 * while Node makes the batch and Node while Redis runs it (64 cycles on one connection,
 * measured: one write per tick 65k cycles/s, no corking 70k, a write per 16 commands
 * 98-101k with a third of the Node CPU). node-redis corks on its own.
 *
 * Invariants: the bytes and their order are the client library's, untouched (corking only
 * holds them in the socket's buffer); every cork is undone in the tick that made it, on
 * the socket that was corked (also when the connection was replaced meanwhile).
 */
export class TickWrites {
  private corked: Corkable | undefined;
  /** Commands held by the cork now. */
  private held = 0;

  /**
   * `busySocket`: the connection's socket when commands written to it now are still
   * awaiting replies (so corking delays nothing that Redis could start on), else undefined.
   */
  constructor(private readonly busySocket: () => Corkable | undefined) {}

  /** Call right before a command is handed to the client library. */
  beforeSend(): void {
    const socket = this.corked;
    if (socket === undefined) {
      const busy = this.busySocket();
      if (busy === undefined) return;
      busy.cork();
      this.corked = busy;
      this.held = 0;
      process.nextTick(this.endTick);
    } else if (this.held === BATCH) {
      uncork(socket);
      socket.cork();
      this.held = 0;
    }
    this.held += 1;
  }

  private readonly endTick = (): void => {
    const socket = this.corked;
    this.corked = undefined;
    if (socket !== undefined) uncork(socket);
  };
}

/**
 * A socket destroyed meanwhile fails its buffered writes through its own events (the
 * client library's 'close' handling); nothing may throw out of a tick callback.
 */
function uncork(socket: Corkable): void {
  try {
    socket.uncork();
  } catch {
    // See above.
  }
}
