/**
 * Progress on stderr (stdout carries the markdown report), and the tallies of what went
 * wrong in the background: errors by kind, process warnings by kind, unhandled rejections.
 */

const startedAt = performance.now();
let prefix = '';

/** Children prefix their lines with their pid. */
export function setLogPrefix(value: string): void {
  prefix = value;
}

export function secondsSinceStart(): number {
  return (performance.now() - startedAt) / 1000;
}

export function log(message: string): void {
  process.stderr.write(`[${secondsSinceStart().toFixed(1).padStart(6)}s] ${prefix}${message}\n`);
}

export function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export function errorStack(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Error kinds seen in this process (first 200 characters) → how often. */
export const errorSamples = new Map<string, number>();

export function noteError(where: string, error: unknown): void {
  const key = `${where}: ${errorText(error)}`.slice(0, 200);
  const n = (errorSamples.get(key) ?? 0) + 1;
  errorSamples.set(key, n);
  if (n === 1) log(`error (first of its kind) ${key}`);
}

/** Process warning kinds (digits folded) → how often. */
export const warningKinds = new Map<string, number>();

/** Node prints each process warning; peers repeat theirs thousands of times: print each kind once. */
export function dedupeWarnings(): void {
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    const key = `${w.name}: ${w.message.replace(/\d+/g, 'N')}`.slice(0, 200);
    const n = (warningKinds.get(key) ?? 0) + 1;
    warningKinds.set(key, n);
    if (n === 1) log(`warning (first of its kind, repeats counted): ${w.name}: ${w.message}`);
  });
}

export function warningCount(): number {
  let n = 0;
  for (const v of warningKinds.values()) n += v;
  return n;
}

let unhandled = 0;

export function unhandledRejections(): number {
  return unhandled;
}

/** Unhandled rejections are counted (and reported), never fatal: a peer's leak must not end the run. */
export function countUnhandledRejections(): void {
  process.on('unhandledRejection', (reason: unknown) => {
    unhandled++;
    if (unhandled <= 3) log(`unhandled rejection (counted, not fatal): ${errorText(reason)}`);
  });
}

/** Unhandled rejections and warnings of child processes that have exited. */
export const childCounts = { unhandled: 0, warnings: 0 };
