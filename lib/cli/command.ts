// Runs the command under the lock: spawned directly (no shell) with the terminal's
// stdio, signals forwarded to it, and stopped (SIGTERM, then SIGKILL after the grace)
// when the lock is lost.
import { spawn } from 'node:child_process';
import type { LockLostError } from '../index.js';
import { EXIT_CANNOT_EXECUTE, EXIT_LOCK_LOST, EXIT_NOT_FOUND, signalStatus } from './exit-codes.js';
import type { Log } from './io.js';
import type { SignalRouter } from './signals.js';

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
 * could not be run); never rejects. While it runs, `router` forwards signals to it, and
 * `lost` aborting (with a LockLostError) stops it. The status is the command's own even
 * after a loss: the caller decides what a loss means.
 */
export function runCommand(spec: CommandSpec, lost: AbortSignal, router: SignalRouter, log: Log): Promise<number> {
  return new Promise<number>((resolve) => {
    let running = true;
    let killTimer: NodeJS.Timeout | undefined;
    const child = spawn(spec.command, spec.args, { stdio: 'inherit', env: { ...process.env, ...spec.env } });
    router.commandStarted(child);

    const finish = (status: number) => {
      running = false;
      router.commandEnded();
      lost.removeEventListener('abort', onLost);
      clearTimeout(killTimer);
      resolve(status);
    };
    // Both may come ('error' after a failed kill, say); the first settles.
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (!running) return;
      log.say(`cannot run '${spec.command}': ${error.message}`);
      finish(error.code === 'ENOENT' ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE);
    });
    child.once('exit', (code, signal) => {
      if (!running) return;
      if (signal) log.verbose(`the command died of ${signal}`);
      finish(signal ? signalStatus(signal) : (code ?? EXIT_LOCK_LOST));
    });

    function onLost(): void {
      if (!running) return;
      const error = lost.reason as LockLostError;
      log.say(`${error.message} (reason: ${error.reason}); stopping the command (pid ${child.pid}): SIGTERM now, SIGKILL in ${spec.grace} ms`);
      child.kill('SIGTERM');
      killTimer = setTimeout(() => {
        if (!running) return;
        log.say(`the command did not end within ${spec.grace} ms of SIGTERM: SIGKILL`);
        child.kill('SIGKILL');
      }, spec.grace);
    }
    if (lost.aborted) onLost();
    else lost.addEventListener('abort', onLost, { once: true });
  });
}
