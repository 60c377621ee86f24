/** The part of a socket (Node's stream.Writable) that TickWrites uses. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Coalesces the commands one tick sends on one connection into one socket write.
 *
 * ioredis writes every command to its socket at once: a write system call each, which
 * on loopback costs more than everything else a lock/unlock cycle does in Node (64 locks
 * cycling on one connection: ~9 of ~17 us of Node CPU per cycle). Many commands go out
 * in the same tick whenever replies arrive together and their continuations send the
 * next calls. The first command of a tick is written at once (Redis starts on it while
 * the tick goes on); from the second on, the socket is corked and uncorked after every
 * BATCH commands and at the end of the tick (process.nextTick: after the microtasks the
 * replies set off), so they leave BATCH to a writev. Not a whole tick to one write: Redis
 * would then idle while Node makes the batch and Node while Redis runs it (64 cycles
 * on one connection, measured: one write per tick 65k cycles/s, no corking 70k, a write
 * per 16 commands 101k, with a third of the Node CPU). node-redis corks on its own.
 *
 * Invariants: the bytes and their order are the client library's, untouched (corking only
 * holds them in the socket's buffer); every cork is undone in the same tick, on the
 * socket that was corked (also when the connection was replaced meanwhile).
 */
/** Commands per socket write at most (beyond a tick's first). */
const BATCH = 16;

export class TickWrites {
  private sentThisTick = false;
  private corked: Corkable | undefined;
  /** Commands held by the cork now. */
  private held = 0;

  /** `socketOf`: the connection's current socket when it is writable now, else undefined. */
  constructor(private readonly socketOf: () => Corkable | undefined) {}

  /** Call right before a command is handed to the client library. */
  beforeSend(): void {
    if (!this.sentThisTick) {
      this.sentThisTick = true;
      process.nextTick(this.endTick);
      return;
    }
    // A full batch leaves before this command (which begins the next one), or at the end
    // of the tick.
    if (this.held === BATCH) this.flush();
    if (this.corked === undefined) {
      const socket = this.socketOf();
      if (socket === undefined) return;
      socket.cork();
      this.corked = socket;
    }
    this.held += 1;
  }

  private flush(): void {
    const socket = this.corked;
    if (socket === undefined) return;
    this.corked = undefined;
    this.held = 0;
    // A socket destroyed meanwhile fails its buffered writes through its own events
    // (the client library's 'close' handling); nothing may throw out of a tick callback.
    try {
      socket.uncork();
    } catch {
      // See above.
    }
  }

  private readonly endTick = (): void => {
    this.sentThisTick = false;
    this.flush();
  };
}
