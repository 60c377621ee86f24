/**
 * Waiting helpers of the test servers, on real timers (from the module, not the
 * globals: specs may install jest fake timers, which also freeze Date.now()).
 */
import fs from 'node:fs';
import { clearTimeout, setTimeout } from 'node:timers';

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A deadline on a real timer rather than Date.now(), which fake timers freeze. */
export function deadline(ms: number): { readonly expired: boolean; cancel(): void } {
  let expired = false;
  const timer = setTimeout(() => (expired = true), ms);
  return {
    get expired() {
      return expired;
    },
    cancel: () => clearTimeout(timer),
  };
}

export function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

export function readTail(file: string, lines: number): string {
  try {
    return tail(fs.readFileSync(file, 'utf8'), lines);
  } catch {
    return '(no log file)';
  }
}
