// Where the signals sent to holdfast go. The command runs in a process group of its own
// (command.ts), so a signal sent to holdfast's group (a terminal's Ctrl-C, kill -- -PGID,
// timeout(1)) no longer reaches it directly; holdfast passes every signal it can catch on
// to the command's group, once. Without a command, a signal that would end a process
// stops connecting or waiting (`interrupted`), or, during the final cleanup (closing the
// client, whose release may wait on an unresponsive Redis), exits at once.
import { constants as osConstants } from 'node:os';

/**
 * Never listened to: SIGKILL and SIGSTOP cannot be caught; SIGBUS, SIGFPE, SIGSEGV and
 * SIGILL are faults after which Node must not run JavaScript (a listener can hang the
 * process instead of letting it die); SIGCHLD is about holdfast's own child, and SIGPIPE
 * is one Node ignores and the kernel raises for holdfast's own writes to a closed pipe.
 */
const NOT_CAUGHT: ReadonlySet<string> = new Set(['SIGKILL', 'SIGSTOP', 'SIGBUS', 'SIGFPE', 'SIGSEGV', 'SIGILL', 'SIGCHLD', 'SIGPIPE']);
/** Stop signals: their default action stops the process; see route(). */
const JOB_CONTROL: ReadonlySet<string> = new Set(['SIGTSTP', 'SIGTTIN', 'SIGTTOU']);
/** Default action "ignore" (or "continue"): without a command to pass them to, nothing to do. */
const HARMLESS: ReadonlySet<string> = new Set(['SIGCONT', 'SIGURG', 'SIGWINCH']);

/**
 * Every signal holdfast listens to, one name per number: an alias (SIGIOT for SIGABRT,
 * SIGPOLL for SIGIO) would add a second listener for the same delivery and pass it on twice.
 */
export const CAUGHT: readonly NodeJS.Signals[] = (() => {
  const seen = new Set<number>();
  const names: NodeJS.Signals[] = [];
  for (const [name, number] of Object.entries(osConstants.signals) as [NodeJS.Signals, number][]) {
    if (NOT_CAUGHT.has(name) || seen.has(number)) continue;
    seen.add(number);
    names.push(name);
  }
  return names;
})();

/** The reason of SignalRouter.interrupted: holdfast was told to stop before the command ran. */
export class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
  }
}

export interface SignalHandlers {
  /** A signal is about to be passed on to the command's process group. */
  forwarding(signal: NodeJS.Signals, pid: number): void;
  /** A signal that ends a process came during the final cleanup: holdfast must exit now. */
  exitNow(signal: NodeJS.Signals): void;
}

/** Sends `signal` to the process group led by `pid` (the command's); false when it is gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 'SIGSTOP' | 'SIGKILL'): boolean {
  try {
    // Windows has neither groups nor signals: the process alone, as child.kill would.
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
    return true;
  } catch {
    return false; // ESRCH: every process of the group has exited
  }
}

/** Listens on the process from construction until stop(). */
export class SignalRouter {
  private readonly controller = new AbortController();
  private commandPid: number | undefined;
  private cleaningUp = false;
  private readonly onSignal = (signal: NodeJS.Signals) => this.route(signal);

  constructor(private readonly handlers: SignalHandlers) {
    // A listener also keeps Node from acting on its own: SIGUSR1 would open the
    // inspector on port 9229, the others would end holdfast and orphan the command.
    for (const s of CAUGHT) process.on(s, this.onSignal);
  }

  /** Aborted with an Interrupted by the first signal that would end a process, while no command ran. */
  get interrupted(): AbortSignal {
    return this.controller.signal;
  }

  /** From now until `commandEnded()`, signals go to the process group of `pid`. */
  commandStarted(pid: number): void {
    this.commandPid = pid;
  }

  commandEnded(): void {
    this.commandPid = undefined;
  }

  /** Closing the client and the connections: a signal now exits without waiting for them. */
  cleanupStarted(): void {
    this.cleaningUp = true;
  }

  stop(): void {
    for (const s of CAUGHT) process.off(s, this.onSignal);
  }

  private route(signal: NodeJS.Signals): void {
    const pid = this.commandPid;
    if (JOB_CONTROL.has(signal)) {
      // Ctrl-Z: stop the command, then holdfast, so that the shell sees a stopped job
      // and `fg` (SIGCONT to holdfast, passed on) resumes both. SIGSTOP and not the
      // signal itself: the command's group has no parent in its session (it is
      // orphaned), and the kernel drops SIGTSTP, SIGTTIN and SIGTTOU sent to such a
      // group unless they are caught. While stopped holdfast renews nothing: a stop
      // longer than the lease loses the lock, and the command is stopped on resume.
      if (pid !== undefined) {
        this.handlers.forwarding(signal, pid);
        signalGroup(pid, 'SIGSTOP');
      }
      process.kill(process.pid, 'SIGSTOP');
    } else if (pid !== undefined) {
      this.handlers.forwarding(signal, pid);
      signalGroup(pid, signal);
    } else if (HARMLESS.has(signal)) {
      // nothing to pass it to, and it would not have ended holdfast either
    } else if (this.cleaningUp) {
      this.handlers.exitNow(signal);
    } else if (!this.controller.signal.aborted) {
      this.controller.abort(new Interrupted(signal));
    }
  }
}
