// The whole program without the process around it: parse, then help, version or a command.
import { parseCommandLine, UsageError, type Parsed } from './args.js';
import { ClientLibraryMissing, redisConstructor } from './client-library.js';
import { exec } from './exec.js';
import { EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE } from './exit-codes.js';
import { version } from './help.js';
import { defaultIo, type Io } from './io.js';
import { ls } from './ls.js';
import { release } from './release.js';
import { status } from './status.js';

/** Resolves with the exit status. Rejects only on a bug (anything but a UsageError while parsing). */
export async function main(argv: readonly string[], io: Io = defaultIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseCommandLine(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const command = argv[0] !== undefined && ['exec', 'status', 'ls', 'release'].includes(argv[0]) ? argv[0] : undefined;
    io.stderr(`holdfast: ${error.message}\nTry 'holdfast ${command === undefined ? '--help' : `${command} --help`}'.\n`);
    return EXIT_USAGE;
  }
  switch (parsed.kind) {
    case 'help':
      io.stdout(parsed.text);
      return EXIT_OK;
    case 'version':
      io.stdout(`${version}\n`);
      return EXIT_OK;
  }
  // Every command connects: without a client library it says what to install, before
  // anything runs.
  try {
    redisConstructor();
  } catch (error) {
    if (!(error instanceof ClientLibraryMissing)) throw error;
    io.stderr(`holdfast: ${error.message}\n`);
    return EXIT_UNAVAILABLE;
  }
  switch (parsed.kind) {
    case 'exec':
      return exec(parsed.options, io);
    case 'status':
      return status(parsed.options, io);
    case 'ls':
      return ls(parsed.options, io);
    case 'release':
      return release(parsed.options, io);
  }
}
