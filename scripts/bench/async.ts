/** Time-bounded waiting and bounded concurrency. */

/** Monotonic microseconds, the same clock in every process (CLOCK_MONOTONIC). */
export function hrUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Resolves with the number of promises still pending at `untilMs` (performance.now() time). */
export async function settleWithin(promises: Promise<unknown>[], untilMs: number): Promise<number> {
  let pending = promises.length;
  const all = Promise.all(promises.map((p) => p.then(() => void pending--, () => void pending--)));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, untilMs - performance.now()));
  });
  await Promise.race([all, timeout]);
  clearTimeout(timer);
  return pending;
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs fn(0..n-1) with at most `concurrency` calls in flight. */
export async function pool(n: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}
