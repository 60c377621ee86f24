// Where holdfast writes: its messages go to stderr prefixed "holdfast: ", help and
// version to stdout. Replaceable so that main() and exec() can be driven in process.

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const defaultIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** An error's message (or the thrown value as text), for one line of stderr. */
export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** holdfast's own lines on stderr; `verbose` ones only with -v. */
export interface Log {
  say(text: string): void;
  verbose(text: string): void;
}

export function logTo(io: Io, verbose: boolean): Log {
  const say = (text: string) => io.stderr(`holdfast: ${text}\n`);
  return { say, verbose: (text) => verbose && say(text) };
}
