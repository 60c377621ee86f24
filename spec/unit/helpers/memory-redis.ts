/**
 * One Redis server in memory, for the engine's unit specs: a keyspace with passive
 * expiry (a key past its expiry is gone when next read, as in Redis) and pub/sub. Its
 * clock is the only clock: `clock()` is read for every expiry and for the server time
 * the scripts use, so jest's fake timers (which fake performance.now) drive the engine
 * and the server's expiries alike. Scripts run synchronously: each is atomic, as a Lua
 * script is.
 *
 * Only the commands the lock's scripts use exist; a key holds one kind of value, and an
 * aggregate left empty is deleted (Redis has no empty hash, list or sorted set).
 */

type Value = { kind: 'hash'; map: Map<string, string> } | { kind: 'list'; items: string[] } | { kind: 'zset'; scores: Map<string, number> } | { kind: 'string'; text: string };

interface Entry {
  value: Value;
  /** Server ms at which the key is gone; undefined: no expiry. */
  expiresAt?: number;
}

/** Where a published message goes: one client's subscriber (MemoryStore). */
export interface Subscriber {
  /** Whether this subscriber receives `channel` now (the server counts it). */
  listens(channel: string): boolean;
  deliver(channel: string, message: string): void;
}

export class MemoryRedis {
  private readonly data = new Map<string, Entry>();
  private readonly subscribers = new Set<Subscriber>();
  /** Every message published, in order, with how many subscribers the server counted. */
  readonly published: { channel: string; message: string; receivers: number }[] = [];

  constructor(
    /** Monotonic ms; defaults to performance.now(), which jest's fake timers drive. */
    readonly clock: () => number = () => performance.now(),
    /** Added to the clock for the server's TIME (tokens start from it in microseconds). */
    private readonly epoch = 1_700_000_000_000,
  ) {}

  /** The server's TIME in ms, as _queue.lua's clock() reads it. */
  time(): number {
    return Math.floor(this.epoch + this.clock());
  }

  attach(subscriber: Subscriber): void {
    this.subscribers.add(subscriber);
  }

  detach(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
  }

  publish(channel: string, message: string): number {
    const receivers = [...this.subscribers].filter((s) => s.listens(channel));
    this.published.push({ channel, message, receivers: receivers.length });
    for (const s of receivers) s.deliver(channel, message);
    return receivers.length;
  }

  // ---- keys ------------------------------------------------------------------------

  private entry(key: string): Entry | undefined {
    const entry = this.data.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= this.time()) {
      this.data.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Keys of `keys` that exist (EXISTS k1 k2 ...). */
  exists(...keys: string[]): number {
    return keys.filter((k) => this.entry(k) !== undefined).length;
  }

  del(...keys: string[]): number {
    let n = 0;
    for (const k of keys) if (this.entry(k) !== undefined && this.data.delete(k)) n += 1;
    return n;
  }

  /** -2 absent, -1 no expiry, else ms left. */
  pttl(key: string): number {
    const entry = this.entry(key);
    if (!entry) return -2;
    if (entry.expiresAt === undefined) return -1;
    return entry.expiresAt - this.time();
  }

  pexpire(key: string, ms: number): number {
    const entry = this.entry(key);
    if (!entry) return 0;
    entry.expiresAt = this.time() + ms;
    return 1;
  }

  /** The server ms a key expires at (undefined: absent or no expiry), for specs. */
  expiresAt(key: string): number | undefined {
    return this.entry(key)?.expiresAt;
  }

  private value<K extends Value['kind']>(key: string, kind: K, create: boolean): Extract<Value, { kind: K }> | undefined {
    let entry = this.entry(key);
    if (!entry) {
      if (!create) return undefined;
      const fresh: Value = kind === 'hash' ? { kind, map: new Map() } : kind === 'list' ? { kind, items: [] } : kind === 'zset' ? { kind, scores: new Map() } : { kind: 'string', text: '' };
      entry = { value: fresh };
      this.data.set(key, entry);
    }
    if (entry.value.kind !== kind) throw new Error(`WRONGTYPE ${key} holds a ${entry.value.kind}, not a ${kind}`);
    return entry.value as Extract<Value, { kind: K }>;
  }

  /** Deletes an aggregate left empty. */
  private prune(key: string, size: number): void {
    if (size === 0) this.data.delete(key);
  }

  /**
   * A key as a spec compares it with real Redis (spec/integration/memory-mirror.spec.ts):
   * its type, its content (a hash's fields and a sorted set's members sorted, as
   * [field, value] / [member, score] pairs), and its PTTL. 'none' when absent.
   */
  dump(key: string): { kind: Value['kind'] | 'none'; value: unknown; pttl: number } {
    const entry = this.entry(key);
    if (!entry) return { kind: 'none', value: null, pttl: -2 };
    const v = entry.value;
    const value = v.kind === 'hash' ? [...v.map].sort() : v.kind === 'list' ? [...v.items] : v.kind === 'zset' ? [...v.scores].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)) : v.text;
    return { kind: v.kind, value, pttl: this.pttl(key) };
  }

  /** Sets a key as dump() gives it (absent: deleted), for a spec that takes real Redis's state. */
  load(key: string, kind: Value['kind'] | 'none', value: unknown, pttl: number): void {
    this.data.delete(key);
    if (kind === 'none') return;
    const v: Value =
      kind === 'hash'
        ? { kind, map: new Map(value as [string, string][]) }
        : kind === 'list'
          ? { kind, items: [...(value as string[])] }
          : kind === 'zset'
            ? { kind, scores: new Map((value as [string, number | string][]).map(([m, score]) => [m, Number(score)])) }
            : { kind, text: String(value) };
    this.data.set(key, { value: v, expiresAt: pttl < 0 ? undefined : this.time() + pttl });
  }

  // ---- hashes ----------------------------------------------------------------------

  hget(key: string, field: string): string | undefined {
    return this.value(key, 'hash', false)?.map.get(field);
  }

  hset(key: string, field: string, value: string | number): void {
    this.value(key, 'hash', true)!.map.set(field, String(value));
  }

  hdel(key: string, field: string): number {
    const hash = this.value(key, 'hash', false);
    if (!hash) return 0;
    const n = hash.map.delete(field) ? 1 : 0;
    this.prune(key, hash.map.size);
    return n;
  }

  hexists(key: string, field: string): boolean {
    return this.hget(key, field) !== undefined;
  }

  /** HINCRBY: the field stays (at 0 too), as in Redis. */
  hincrby(key: string, field: string, by: number): number {
    const hash = this.value(key, 'hash', true)!;
    const next = Number(hash.map.get(field) ?? '0') + by;
    hash.map.set(field, String(next));
    return next;
  }

  hgetall(key: string): [string, string][] {
    return [...(this.value(key, 'hash', false)?.map ?? [])];
  }

  // ---- lists -----------------------------------------------------------------------

  rpush(key: string, item: string): void {
    this.value(key, 'list', true)!.items.push(item);
  }

  lindex0(key: string): string | undefined {
    return this.value(key, 'list', false)?.items[0];
  }

  /** LREM key 0 item: every occurrence. */
  lrem(key: string, item: string): void {
    const list = this.value(key, 'list', false);
    if (!list) return;
    list.items = list.items.filter((i) => i !== item);
    this.prune(key, list.items.length);
  }

  llen(key: string): number {
    return this.value(key, 'list', false)?.items.length ?? 0;
  }

  list(key: string): string[] {
    return [...(this.value(key, 'list', false)?.items ?? [])];
  }

  // ---- sorted sets -----------------------------------------------------------------

  zadd(key: string, score: number, member: string): void {
    this.value(key, 'zset', true)!.scores.set(member, score);
  }

  zrem(key: string, member: string): void {
    const zset = this.value(key, 'zset', false);
    if (!zset) return;
    zset.scores.delete(member);
    this.prune(key, zset.scores.size);
  }

  zscore(key: string, member: string): number | undefined {
    return this.value(key, 'zset', false)?.scores.get(member);
  }

  /** ZRANGEBYSCORE key -inf max, by score. */
  zrangeUpTo(key: string, max: number): string[] {
    const zset = this.value(key, 'zset', false);
    if (!zset) return [];
    return [...zset.scores].filter(([, s]) => s <= max).sort((a, b) => a[1] - b[1]).map(([m]) => m);
  }

  // ---- strings ---------------------------------------------------------------------

  get(key: string): string | undefined {
    return this.value(key, 'string', false)?.text;
  }

  set(key: string, text: string, px?: number): void {
    this.data.set(key, { value: { kind: 'string', text }, expiresAt: px === undefined ? undefined : this.time() + px });
  }

  /** INCR; the key keeps its expiry. */
  incr(key: string): number {
    const entry = this.value(key, 'string', true)!;
    const next = Number(entry.text || '0') + 1;
    entry.text = String(next);
    return next;
  }
}
