import { LockClient } from 'holdfast';

/** A store of balances that refuses a write carrying an older fencing token than one it has seen. */
export interface Accounts {
  balance(id: string): Promise<number>;
  write(id: string, balance: number, token: number): Promise<void>;
}

// #region example
// A transfer holds both accounts, all or nothing. The names are taken in sorted order,
// so transfer(1, 2) and transfer(2, 1) running at once (in any processes) never
// deadlock; each write carries its own account's fencing token.
export async function transfer(locks: LockClient, accounts: Accounts, from: string, to: string, amount: number): Promise<void> {
  const both = locks.getMultiLock([`account:${from}`, `account:${to}`]);
  await both.run(
    async ({ signal, tokens }) => {
      const [source, target] = await Promise.all([accounts.balance(from), accounts.balance(to)]);
      if (source < amount) throw new RangeError(`account ${from} holds ${source}, less than ${amount}`);
      signal.throwIfAborted(); // one of the two was lost meanwhile: write nothing
      await accounts.write(from, source - amount, tokens[`account:${from}`]);
      await accounts.write(to, target + amount, tokens[`account:${to}`]);
    },
    { waitTime: 5_000 },
  );
}
// #endregion example
