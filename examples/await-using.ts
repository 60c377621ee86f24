import { LockClient } from 'holdfast';

// #region example
// `await using` releases the lock when the block ends, however it ends.
export async function transfer(locks: LockClient, balances: Map<string, number>, from: string, to: string, amount: number) {
  await using held = await locks.getLock(`account:${from}`).acquire({ waitTime: 1_000 });
  held.signal.throwIfAborted(); // aborted (LockLostError) if the lock was lost meanwhile
  balances.set(from, (balances.get(from) ?? 0) - amount);
  balances.set(to, (balances.get(to) ?? 0) + amount);
  return held.token;
}
// #endregion example
