// What holdfast does when it fails in a way it has no status for (an uncaught exception,
// a rejected main(): a bug): stop the command it runs, the same way as after a loss
// (SIGTERM to its group, SIGKILL after --grace), wait until it has exited, and only then
// exit EXIT_INTERNAL. Exiting at once would leave the command running with nobody to
// renew the lock, past its expiry.
import type { ChildProcess } from 'node:child_process';
import { EXIT_INTERNAL, REPORT_TO } from './exit-codes.js';
import { signalGroup } from './signals.js';

interface Guarded {
  child: ChildProcess;
  pid: number;
  grace: number;
}

/** The command running now, if any: one at a time per process. */
let guarded: Guarded | undefined;
let failing = false;

/** Registers the command just started; the function returned unregisters it when it has exited. */
export function guardCommand(child: ChildProcess, pid: number, grace: number): () => void {
  const entry = { child, pid, grace };
  guarded = entry;
  return () => {
    if (guarded === entry) guarded = undefined;
  };
}

/** Reports `error`, stops the command if one runs, then exits EXIT_INTERNAL. Idempotent. */
export function failInternally(error: unknown, write: (text: string) => void): void {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  try {
    write(`holdfast: internal error (please report it at ${REPORT_TO}): ${text}\n`);
  } catch {
    // stderr is gone: the exit status still says it
  }
  if (failing) return;
  failing = true;
  const command = guarded;
  if (command === undefined || command.child.exitCode !== null || command.child.signalCode !== null) {
    process.exit(EXIT_INTERNAL);
  }
  write(`holdfast: stopping the command (pid ${command.pid}): SIGTERM now, SIGKILL in ${command.grace} ms; exiting ${EXIT_INTERNAL} after\n`);
  command.child.once('exit', () => process.exit(EXIT_INTERNAL));
  signalGroup(command.pid, 'SIGTERM');
  signalGroup(command.pid, 'SIGCONT');
  setTimeout(() => signalGroup(command.pid, 'SIGKILL'), command.grace);
}
