import { LockClient } from 'holdfast';

// #region example
// A store that remembers the highest fencing token it has seen and refuses writes
// carrying an older one: a holder that paused past its lease cannot clobber the
// writes of the owner that came after it.
export class FencedStore {
  private highest = 0;
  readonly values: string[] = [];

  write(value: string, token: number): void {
    if (token < this.highest) throw new Error(`stale token ${token} < ${this.highest}`);
    this.highest = token;
    this.values.push(value);
  }
}

export async function saveProfile(locks: LockClient, store: FencedStore, value: string): Promise<void> {
  await locks.getLock('profile:7').run(async ({ signal, token }) => {
    const rendered = await render(value, signal); // long work stops if the lock is lost
    store.write(rendered, token);
  });
}

async function render(value: string, signal: AbortSignal): Promise<string> {
  signal.throwIfAborted();
  return value.toUpperCase();
}
// #endregion example
