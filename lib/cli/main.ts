// The whole program without the process around it: parse, then help, version or exec.
import { parseArgs, UsageError, type Parsed } from './args.js';
import { exec } from './exec.js';
import { EXIT_OK, EXIT_USAGE } from './exit-codes.js';
import { version } from './help.js';
import { defaultIo, type Io } from './io.js';

/** Resolves with the exit status. Rejects only on a bug (anything but a UsageError while parsing). */
export async function main(argv: readonly string[], io: Io = defaultIo): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`holdfast: ${error.message}\nTry 'holdfast --help' or 'holdfast exec --help'.\n`);
    return EXIT_USAGE;
  }
  switch (parsed.kind) {
    case 'help':
      io.stdout(parsed.text);
      return EXIT_OK;
    case 'version':
      io.stdout(`${version}\n`);
      return EXIT_OK;
    case 'exec':
      return exec(parsed.options, io);
  }
}
