// Runs the command under the lock: spawned directly (no shell) with holdfast's stdio,
// in a process group of its own (so that signals reach it once, see signals.ts), and
// stopped (SIGTERM, then SIGKILL after the grace, to its whole group) when the lock is
// lost.
import { spawn } from 'node:child_process';
import type { LockLostError, LockRevokedError } from '../index.js';
import { EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND, signalStatus } from './exit-codes.js';
import type { Log } from './io.js';
import { guardCommand } from './last-resort.js';
import { signalGroup, type SignalRouter } from './signals.js';

export interface CommandSpec {
  command: string;
  args: string[];
  /** Added to holdfast's environment (HOLDFAST_LOCK, HOLDFAST_TOKEN). */
  env: Record<string, string>;
  /** ms between SIGTERM and SIGKILL after a loss. */
  grace: number;
}

/**
 * Resolves with the command's status (128+N when it died of signal N, 127/126 when it
 * could not be run); never rejects, and never before the command has exited. While it
 * runs, `router` passes signals on to it, and `lost` aborting (with a LockLostError, or
 * a LockRevokedError: the holder was asked to let go) stops it. The status is the command's own even after a loss: the caller decides what
 * a loss means.
 */
export function runCommand(spec: CommandSpec, lost: AbortSignal, router: SignalRouter, log: Log): Promise<number> {
  return new Promise<number>((resolve) => {
    let running = true;
    let killTimer: NodeJS.Timeout | undefined;
    // detached: setsid(), a new session and process group led by the command. Node has
    // no setpgid(): the price is that the command has no controlling terminal (its
    // stdio is still holdfast's, the terminal's included); see the help on signals.
    const child = spawn(spec.command, spec.args, { stdio: 'inherit', env: { ...process.env, ...spec.env }, detached: true });
    // No pid: the spawn failed, and 'error' follows.
    const pid = child.pid;
    const unguard = pid === undefined ? () => undefined : guardCommand(child, pid, spec.grace);
    if (pid !== undefined) router.commandStarted(pid);

    const finish = (status: number) => {
      running = false;
      router.commandEnded();
      unguard();
      lost.removeEventListener('abort', onLost);
      clearTimeout(killTimer);
      resolve(status);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      // After a spawn that worked, 'error' means a failed kill: the 'exit' settles.
      if (!running || pid !== undefined) return;
      log.say(`cannot run '${spec.command}': ${error.message}`);
      finish(error.code === 'ENOENT' ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE);
    });
    child.once('exit', (code, signal) => {
      if (!running) return;
      if (signal) log.verbose(`the command died of ${signal}`);
      finish(signal ? signalStatus(signal) : (code ?? EXIT_CANNOT_EXECUTE));
    });

    function onLost(): void {
      if (!running || pid === undefined) return;
      const error = lost.reason as LockLostError | LockRevokedError;
      log.say(`${error.message} (reason: ${error.reason}); stopping the command (pid ${pid}): SIGTERM now, SIGKILL in ${spec.grace} ms`);
      signalGroup(pid, 'SIGTERM');
      signalGroup(pid, 'SIGCONT'); // a command stopped by Ctrl-Z gets the SIGTERM now
      killTimer = setTimeout(() => {
        if (!running) return;
        log.say(`the command did not end within ${spec.grace} ms of SIGTERM: SIGKILL`);
        signalGroup(pid, 'SIGKILL');
      }, spec.grace);
    }
    if (lost.aborted) onLost();
    else lost.addEventListener('abort', onLost, { once: true });
  });
}
