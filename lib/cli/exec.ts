// `holdfast exec`: connect, take the lock (or with --limit a permit of a semaphore), run
// the command under it, release, and turn all of it into one exit status. Built on the
// library's public API only (guard.ts).
import type Redis from 'ioredis';
import { LockClient, LockLostError } from '../index.js';
import { acquireFailureStatus, describeUnavailable } from './acquire-failure.js';
import { guardOf, type Guarded } from './guard.js';
import type { ExecOptions } from './args.js';
import { runCommand } from './command.js';
import { connectAll, enoughReached } from './connect.js';
import { EXIT_INTERNAL, REPORT_TO, EXIT_LOCK_BUSY, EXIT_LOCK_LOST, EXIT_UNAVAILABLE, signalStatus } from './exit-codes.js';
import { defaultIo, logTo, message, type Io, type Log } from './io.js';
import { Interrupted, SignalRouter } from './signals.js';

/** Runs `holdfast exec` with parsed options. Resolves with the exit status; never rejects. */
export async function exec(o: ExecOptions, io: Io = defaultIo): Promise<number> {
  const log = logTo(io, o.verbose);
  const router = new SignalRouter({
    forwarding: (signal, pid) => log.verbose(`forwarding ${signal} to the command (process group ${pid})`),
    exitNow: (signal) => {
      log.say(`${signal} while releasing '${o.name}': exiting now; the lock expires within ${o.lease} ms`);
      process.exit(signalStatus(signal));
    },
  });
  let connections: Redis[] = [];
  let locks: LockClient | undefined;
  try {
    for (const w of o.warnings) log.say(w);
    const connecting = connectAll(o.urls, o.password, o.connectTimeout, router.interrupted);
    connections = connecting.redis;
    const failures = await connecting.failures;
    if (router.interrupted.aborted) throw router.interrupted.reason;
    if (!enoughReached(failures, o.urls.length, connecting.needed, (line) => log.say(line))) return EXIT_UNAVAILABLE;

    // Quorum mode gets every master, the unreachable ones too: they keep reconnecting
    // and count again once back.
    locks = new LockClient(o.urls.length > 1 ? connections : connections[0], {
      watchdogTimeout: o.lease,
      ...(o.prefix === undefined ? {} : { keyPrefix: o.prefix }),
    });
    locks.on('error', (error) => log.say(`warning: ${message(error)}`));
    return await holdAndRun(locks, o, router, log);
  } catch (error) {
    if (error instanceof Interrupted) {
      log.say(`${error.signal} while waiting for '${o.name}': the command was not run`);
      return signalStatus(error.signal);
    }
    // Never while the command runs: runCommand does not settle before it has exited.
    log.say(`internal error (please report it at ${REPORT_TO}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return EXIT_INTERNAL;
  } finally {
    router.cleanupStarted();
    await locks?.close().catch(() => undefined);
    for (const c of connections) c.disconnect();
    router.stop();
  }
}

/**
 * Takes the lock, runs the command while it is held, releases it. The status is the
 * command's unless the lock was lost before the command ended (EXIT_LOCK_LOST) or was
 * not taken. Rejects with Interrupted when a signal stopped the wait.
 */
async function holdAndRun(locks: LockClient, o: ExecOptions, router: SignalRouter, log: Log): Promise<number> {
  const guard = guardOf(locks, o, log);
  const kind = o.limit === undefined ? 'lock' : 'semaphore';

  const waitStart = performance.now();
  let held: Guarded;
  try {
    if (o.wait === undefined) log.verbose(`waiting for '${o.name}'`);
    // No leaseTime: the watchdog renews the hold for as long as the command runs, each
    // time for --lease (the client's watchdogTimeout).
    held = await guard.take({ signal: router.interrupted, ...(o.wait === undefined ? {} : { waitTime: o.wait }) });
  } catch (error) {
    if (error instanceof Interrupted) throw error;
    const status = acquireFailureStatus(error);
    if (status === EXIT_LOCK_BUSY) {
      // Who keeps it busy, best effort: the answer is only for the message.
      log.say(`${kind} '${o.name}' is ${await guard.busy()}; ${o.wait === 0 ? 'not taken at once (-n: one attempt)' : `not taken within ${o.wait} ms`}`);
      return o.conflictExitCode;
    }
    log.say(`cannot take '${o.name}': ${describeUnavailable(error)}`);
    return status;
  }
  log.verbose(`acquired '${o.name}' (${held.what}) after ${Math.round(performance.now() - waitStart)} ms; running ${o.command}`);

  let status: number;
  // The loss that counts is one before the command ended: after that, it ran under the lock.
  let lostInTime: LockLostError | undefined;
  try {
    // A request to let go (LockRevokedError) also stops the command, and the status stays
    // the command's unless the hold is lost too before the command ends.
    status = held.lost() ? EXIT_LOCK_LOST : await runUnlessInterrupted(held, o, router, log);
    lostInTime = held.lost();
  } finally {
    // After a loss release() rejects with the LockLostError at once and touches nothing
    // in Redis (the key may be someone else's by now).
    try {
      await held.release();
      log.verbose(`released '${o.name}'`);
    } catch (error) {
      if (!(error instanceof LockLostError)) log.say(`warning: ${message(error)}`);
    }
  }
  if (lostInTime) {
    log.say(`exiting ${EXIT_LOCK_LOST}: ${kind} '${o.name}' was lost (${lostInTime.reason}) before the command ended`);
    return EXIT_LOCK_LOST;
  }
  return status;
}

/** Runs the command, unless a signal came between the grant and now. */
function runUnlessInterrupted(held: Guarded, o: ExecOptions, router: SignalRouter, log: Log): Promise<number> {
  const early = router.interrupted.reason as unknown;
  if (early instanceof Interrupted) {
    log.say(`${early.signal} before the command started: not running it`);
    return Promise.resolve(signalStatus(early.signal));
  }
  const env = { HOLDFAST_LOCK: o.name, ...held.env };
  return runCommand({ command: o.command, args: o.args, env, grace: o.grace }, held.signal, router, log);
}
