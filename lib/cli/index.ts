#!/usr/bin/env node
/**
 * `holdfast`: a distributed flock(1). Runs a command while holding a holdfast lock.
 *
 *   holdfast exec <name> [options] -- <command> [args...]
 *
 * The package's `bin`, built by tsc into dist/cjs/cli/index.js (the shebang above is
 * kept; CommonJS only). The program is main() in ./main; this file only runs it and exits.
 */
import { EXIT_LOCK_LOST } from './exit-codes.js';
import { main } from './main.js';

/** How long releasing and disconnecting may take before holdfast exits regardless. */
const SHUTDOWN_BOUND_MS = 10_000;

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // Everything is closed by now, so the process ends by itself; this is only a
      // bound in case some handle was left open.
      setTimeout(() => process.exit(code), SHUTDOWN_BOUND_MS).unref();
    },
    (error: unknown) => {
      process.stderr.write(`holdfast: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(EXIT_LOCK_LOST);
    },
  );
}
