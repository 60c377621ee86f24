import type { RedisClientPort } from '../client/redis-client.js';
import type { PublishVerb } from '../scripts/acquire.js';
import type { HeldLevels, LockKeys } from '../types.js';
import type { ExactlyOnce, GiveBack } from './exactly-once.js';
import type { ReplicaSync } from './replica-sync.js';

/**
 * What one master (or a Cluster) offers a primitive that keeps its state in Redis: the
 * port its folder builds its store calls from (primitives/lock/queue.ts,
 * primitives/semaphore/store.ts, primitives/read-write/store.ts). MasterStore is the one
 * implementation; quorum mode has none (no single place for a queue or a count).
 *
 * Invariant: every call a primitive's store makes on a lock goes through an ExactlyOnce
 * made here, so the rules of exactly-once.ts hold for it and the store's close() stops
 * them; nothing here knows a primitive.
 */
export interface MasterPort {
  readonly connection: RedisClientPort;
  /** 'spublish' in a Cluster (a script's messages stay on its slot's shard), else 'publish'. */
  readonly publish: PublishVerb;
  /** The TTL (ms) of a name's fencing counter from its last use (scripts/_mint.lua). */
  readonly keyRetention: number;
  /** Option syncReplicas: WAIT behind each grant (replica-sync.ts); a primitive that cannot follow its grants by WAIT refuses it. */
  readonly sync: ReplicaSync | undefined;
  /** The levels the client holds now (a give-back passes them + 1). */
  readonly levels: HeldLevels;
  /**
   * The exactly-once rules for one primitive's calls, giving a grant back by `giveBack`
   * (its own release script, which must not reject). One per primitive and client: an
   * owner's unsettled calls on a hold are counted in it (rule 7).
   */
  exactlyOnce<K extends LockKeys>(giveBack: GiveBack<K>): ExactlyOnce<K>;
}
