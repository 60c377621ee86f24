// Durations on holdfast's command line, as flock(1) and timeout(1) read them: a bare
// number is seconds (`-w 5` waits 5 s, `-w 0.5` half a second); with units `ms s m h`,
// in that order from largest to smallest and each at most once, they add up (`1m30s`,
// `2s500ms`).
import { UsageError } from './usage-error.js';

const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;
/** The units in the order a compound must use them. */
const ORDER: readonly Unit[] = ['h', 'm', 's', 'ms'];

const BARE = /^\d+(?:\.\d+)?$/;
/** One `<number><unit>` part; `ms` before `m` so that "5ms" is not read as "5m" + "s". */
const PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/y;

/** What every duration message says a duration looks like. */
export const DURATION_FORMS = 'seconds (5, 0.5) or a number with a unit ms, s, m, h (250ms, 10s, 1m30s)';

/**
 * `text` as milliseconds (rounded to a whole ms), at least `min`. Throws a UsageError
 * naming `flag` for anything else: a negative or empty value, a unit out of order or
 * repeated, a number too large for a timer.
 */
export function parseDuration(flag: string, text: string, min: number): number {
  const ms = BARE.test(text) ? Number(text) * 1_000 : compound(flag, text);
  const rounded = Math.round(ms);
  // setTimeout fires at once for more than 2^31-1 ms: such a wait would not be a wait.
  if (!Number.isFinite(rounded) || rounded > 2 ** 31 - 1) throw new UsageError(`${flag} is too long: '${text}' (at most 2147483647 ms, about 24.8 days)`);
  if (rounded < min) throw new UsageError(`${flag} must be at least ${min} ms, got '${text}'`);
  return rounded;
}

function compound(flag: string, text: string): number {
  const bad = () => new UsageError(`${flag} takes a duration: ${DURATION_FORMS}; got '${text}'`);
  if (text === '') throw bad();
  let total = 0;
  let lastUnit = -1;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const m = PART.exec(text);
    if (!m) throw bad();
    const unit = ORDER.indexOf(m[2] as Unit);
    if (unit <= lastUnit) throw new UsageError(`${flag}: in '${text}' the units must go from largest to smallest, each once (1h30m, 1m30s, 2s500ms)`);
    lastUnit = unit;
    total += Number(m[1]) * UNIT_MS[m[2] as Unit];
  }
  return total;
}
