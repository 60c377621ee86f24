// holdfast's exit statuses: sysexits.h where one fits, the shells' conventions for the
// command's own failures. The command's status is passed through otherwise.
import { constants as osConstants } from 'node:os';

export const EXIT_OK = 0;
/** Bad command line (EX_USAGE). */
export const EXIT_USAGE = 64;
/** Redis could not be reached, or failed while taking the lock (EX_UNAVAILABLE). */
export const EXIT_UNAVAILABLE = 69;
/** The lock was lost while the command ran; the command was stopped (EX_SOFTWARE: DESIGN.md fixes 70 for this). */
export const EXIT_LOCK_LOST = 70;
/**
 * holdfast itself failed: an error it has no status for (a bug). EX_OSERR, because
 * EX_SOFTWARE (70) means a lost lock here and the two must be told apart; any command
 * it ran was stopped first.
 */
export const EXIT_INTERNAL = 71;
/** Where an EXIT_INTERNAL says to report the bug: package.json's `bugs.url` (spec/package.spec.ts checks they agree). */
export const REPORT_TO = 'https://github.com/holdfast-js/holdfast/issues';
/** The lock could not be taken within --wait, or at once with -n (EX_TEMPFAIL); -E replaces it. */
export const EXIT_LOCK_BUSY = 75;
/** The command exists but could not be executed (as in POSIX shells). */
export const EXIT_CANNOT_EXECUTE = 126;
/** The command was not found (as in POSIX shells). */
export const EXIT_NOT_FOUND = 127;
/** A process that died of signal N exits 128 + N (as in POSIX shells). */
export const EXIT_SIGNAL_BASE = 128;

/** The status of a process that died of (or was stopped by) `signal`: 128 + its number. */
export function signalStatus(signal: NodeJS.Signals): number {
  return EXIT_SIGNAL_BASE + (osConstants.signals[signal] ?? 0);
}
