/** Starts all, or none: a failure stops the ones that did start. */
export async function startAll<T extends { stop(): Promise<void> }>(starts: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(starts);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!failed) return results.map((r) => (r as PromiseFulfilledResult<T>).value);
  await Promise.all(results.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
  throw failed.reason;
}

/** A topology's size: an integer in min..50. */
export function assertCount(name: string, n: number, min: number): void {
  if (!Number.isInteger(n) || n < min || n > 50) {
    throw new RangeError(`${name} must be an integer in ${min}..50, got ${n}`);
  }
}
