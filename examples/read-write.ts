import { LockClient } from 'holdfast';

/** Where documents live; save() refuses a write carrying an older fencing token than one it has seen. */
export interface DocumentStore {
  load(id: string): Promise<string>;
  save(id: string, text: string, token: number): Promise<void>;
  index(id: string, text: string): Promise<void>;
}

// #region example
// Any number of readers share a document; an edit holds it alone, then downgrades:
// it keeps reading while it indexes what it wrote (other readers come in, no writer).
export function documents(locks: LockClient, store: DocumentStore) {
  const lockOf = (id: string) => locks.getReadWriteLock(`doc:${id}`);
  return {
    read: (id: string) => lockOf(id).readLock().run(() => store.load(id)),
    edit: (id: string, change: (text: string) => string) =>
      locks.scope(async () => {
        const rw = lockOf(id);
        const write = await rw.writeLock().acquire({ waitTime: 5_000 });
        let text: string;
        try {
          text = change(await store.load(id));
          await store.save(id, text, write.token);
          await rw.readLock().lock(); // the writer's scope may read...
        } finally {
          await write.release(); // ...and keeps reading after the write lock goes
        }
        try {
          await store.index(id, text);
        } finally {
          await rw.readLock().unlock();
        }
        return text;
      }),
  };
}
// #endregion example
