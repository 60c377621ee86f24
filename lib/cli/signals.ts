// Where SIGINT, SIGTERM and SIGHUP sent to holdfast go: to the command while it runs;
// during the final cleanup (closing the client, whose release of the lock may wait on an
// unresponsive Redis) one exits at once; otherwise the first aborts `interrupted`, which
// stops connecting or waiting (and means nothing once the command has run).
import type { ChildProcess } from 'node:child_process';

/** Signals forwarded to the command (and that interrupt a wait for the lock). */
export const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** The reason of SignalRouter.interrupted: holdfast was told to stop before the command ran. */
export class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
  }
}

export interface SignalHandlers {
  /** A signal is about to be sent on to the command. */
  forwarding(signal: NodeJS.Signals, child: ChildProcess): void;
  /** A signal came during the final cleanup: holdfast must exit now. */
  exitNow(signal: NodeJS.Signals): void;
}

/** Listens on the process from construction until stop(). */
export class SignalRouter {
  private readonly controller = new AbortController();
  private child: ChildProcess | undefined;
  private cleaningUp = false;
  private readonly onSignal = (signal: NodeJS.Signals) => this.route(signal);

  constructor(private readonly handlers: SignalHandlers) {
    for (const s of FORWARDED) process.on(s, this.onSignal);
  }

  /** Aborted with an Interrupted by the first signal that came while no command ran. */
  get interrupted(): AbortSignal {
    return this.controller.signal;
  }

  /** From now until `commandEnded()`, signals go to `child`. */
  commandStarted(child: ChildProcess): void {
    this.child = child;
  }

  commandEnded(): void {
    this.child = undefined;
  }

  /** Closing the client and the connections: a signal now exits without waiting for them. */
  cleanupStarted(): void {
    this.cleaningUp = true;
  }

  stop(): void {
    for (const s of FORWARDED) process.off(s, this.onSignal);
  }

  private route(signal: NodeJS.Signals): void {
    if (this.child) {
      this.handlers.forwarding(signal, this.child);
      this.child.kill(signal);
    } else if (this.cleaningUp) {
      this.handlers.exitNow(signal);
    } else if (!this.controller.signal.aborted) {
      this.controller.abort(new Interrupted(signal));
    }
  }
}
