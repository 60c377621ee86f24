#!/usr/bin/env node
/**
 * `holdfast`: a distributed flock(1). Runs a command while holding a holdfast lock, and
 * shows or clears locks.
 *
 *   holdfast exec <name> [options] -- <command> [args...]
 *   holdfast status <name> | ls [<pattern>] | release <name> --force
 *
 * The package's `bin`, built by tsc into dist/cjs/cli/index.js (the shebang above is
 * kept; CommonJS only). The program is main() in ./main; this file only runs it, and
 * makes any failure of holdfast's own an exit with EXIT_INTERNAL that stops the command
 * first (last-resort.ts).
 */
import { failInternally } from './last-resort.js';
import { main } from './main.js';

/** How long releasing and disconnecting may take before holdfast exits regardless. */
const SHUTDOWN_BOUND_MS = 10_000;

if (require.main === module) {
  const fail = (error: unknown) => failInternally(error, (text) => process.stderr.write(text));
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  // A reader of holdfast's output that went away (`holdfast ... | head -1`) must not make
  // a write fail the whole run: the command goes on, holdfast's own lines are lost.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
    // Everything is closed by now, so the process ends by itself; this is only a
    // bound in case some handle was left open.
    setTimeout(() => process.exit(code), SHUTDOWN_BOUND_MS).unref();
  }, fail);
}
