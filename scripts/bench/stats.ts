/** Pure arithmetic over samples. */

export function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentiles(samples: number[]): { p50: number; p99: number; max: number } {
  if (samples.length === 0) return { p50: NaN, p99: NaN, max: NaN };
  const s = Float64Array.from(samples).sort();
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
  return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1] };
}

/** max/min critical sections per worker (Infinity when one got none). */
export function spread(perWorker: number[]): number {
  if (perWorker.length === 0) return NaN;
  const min = Math.min(...perWorker);
  return min === 0 ? Infinity : Math.max(...perWorker) / min;
}

/**
 * Appends samples in place. Not `push(...more)`: a spread passes every sample as an
 * argument on the stack, which overflows at ~100k samples (a fast machine's round).
 */
export function append(into: number[], more: readonly number[]): void {
  for (const x of more) into.push(x);
}
