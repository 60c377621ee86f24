import { LockClient } from 'holdfast';

// #region example
// Nested service methods: the inner lock() reenters the hold of the outer one,
// because both run in one owner scope.
export function orderService(locks: LockClient, stock: Map<string, number>) {
  const orderLock = (id: string) => locks.getLock(`order:${id}`);

  async function reserveStock(id: string) {
    const lock = orderLock(id);
    await lock.lock(); // reenters: this scope already holds it
    try {
      stock.set(id, (stock.get(id) ?? 0) - 1);
    } finally {
      await lock.unlock();
    }
  }

  async function placeOrder(id: string) {
    const lock = orderLock(id);
    await lock.lock(); // waits until held; the watchdog keeps it alive
    try {
      await reserveStock(id);
    } finally {
      await lock.unlock(); // the last unlock deletes the key and wakes a waiter
    }
  }

  return { placeOrder };
}

// Express-style middleware: each request is its own owner scope.
export const lockScope = (locks: LockClient) => (_req: unknown, _res: unknown, next: () => unknown) => locks.scope(next);
// #endregion example
