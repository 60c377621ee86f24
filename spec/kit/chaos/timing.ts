/** Waiting in the chaos run: every wait has a bound. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Bounded poll of check, every 50 ms. */
export async function until(what: string, timeout: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`${what}: not within ${timeout} ms`);
}
