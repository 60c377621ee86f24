import { checkName, describe } from '../../options.js';

/**
 * The names of a multi-lock, checked before anything is sent: an array of 1 or more
 * distinct valid lock names. Returns them in acquisition order: sorted by UTF-16 code
 * units, the one global order every client uses (never locale-dependent), which is
 * what keeps two multi-locks over overlapping names from deadlocking.
 */
export function checkNames(value: unknown): { given: readonly string[]; ordered: readonly string[] } {
  if (!Array.isArray(value)) throw new TypeError(`getMultiLock(names): names must be an array of strings, got ${describe(value)}`);
  if (value.length === 0) throw new RangeError('getMultiLock(names): names must not be empty');
  const seen = new Set<string>();
  const given = value.map((name: unknown, i) => {
    try {
      checkName(name);
    } catch (error) {
      const Kind = error instanceof RangeError ? RangeError : TypeError;
      throw new Kind(`getMultiLock(names): names[${i}]: ${(error as Error).message}`);
    }
    const valid = name as string;
    if (seen.has(valid)) throw new RangeError(`getMultiLock(names): names[${i}] repeats ${describe(valid)}`);
    seen.add(valid);
    return valid;
  });
  const ordered = [...given].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { given: Object.freeze(given), ordered: Object.freeze(ordered) };
}
