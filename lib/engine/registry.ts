import type { HeldLevels } from '../store/types.js';
import type { Hold } from './hold.js';

/**
 * What a client holds, by hold id (keys.id: the key itself for a lock, one per side of
 * a read-write lock) and owner. Almost always one owner holds a key, so the
 * entry is the Hold itself; a map appears only while several owners of this client are
 * recorded for one key (a lost hold not yet unlocked, beside its successor). This keeps
 * a lock/unlock cycle from allocating a Map per acquisition.
 */
export class HoldRegistry implements HeldLevels {
  private readonly byKey = new Map<string, Hold | Map<string, Hold>>();

  /** The levels owner holds of the hold `key` as far as this client knows (0 for none): what the store's give-backs count from. */
  levelsOf(key: string, owner: string): number {
    return this.get(key, owner)?.levelsHeld ?? 0;
  }

  get(key: string, owner: string): Hold | undefined {
    const entry = this.byKey.get(key);
    if (entry === undefined) return undefined;
    if (entry instanceof Map) return entry.get(owner);
    return entry.owner === owner ? entry : undefined;
  }

  *of(key: string): IterableIterator<Hold> {
    const entry = this.byKey.get(key);
    if (entry === undefined) return;
    if (entry instanceof Map) yield* entry.values();
    else yield entry;
  }

  /** Any live hold on key by an owner other than exceptOwner. */
  heldByOther(key: string, exceptOwner: string): boolean {
    const entry = this.byKey.get(key);
    if (entry === undefined) return false;
    if (!(entry instanceof Map)) return entry.live && entry.owner !== exceptOwner;
    for (const hold of entry.values()) if (hold.live && hold.owner !== exceptOwner) return true;
    return false;
  }

  /** A hold on key whose last unlock is on its way to Redis. */
  releasing(key: string): boolean {
    for (const hold of this.of(key)) if (hold.state === 'releasing') return true;
    return false;
  }

  add(hold: Hold): void {
    const key = hold.keys.id;
    const entry = this.byKey.get(key);
    if (entry === undefined || (!(entry instanceof Map) && entry.owner === hold.owner)) {
      this.byKey.set(key, hold);
    } else if (entry instanceof Map) {
      entry.set(hold.owner, hold);
    } else {
      this.byKey.set(key, new Map([[entry.owner, entry], [hold.owner, hold]]));
    }
  }

  /** Forgets hold, unless another Hold object has replaced it for its owner. */
  remove(hold: Hold): void {
    const key = hold.keys.id;
    const entry = this.byKey.get(key);
    if (entry === hold) {
      this.byKey.delete(key);
    } else if (entry instanceof Map && entry.get(hold.owner) === hold) {
      entry.delete(hold.owner);
      if (entry.size === 1) this.byKey.set(key, entry.values().next().value as Hold);
    }
  }
}
