/**
 * The contract's floor: the least a lock shaped as DESIGN.md requires can send, called
 * by EVALSHA like the raw floor. A hash (owner -> count) under a lease, a fencing token
 * from a counter that expires `keyRetention` after its last use, both changed only by
 * Lua: no waiting list, no reentry, no resend rules, no pub/sub. On several masters:
 * in parallel, held on a majority, like the raw quorum floor. A refused worker polls
 * every PEER_RETRY_MS, as redis-semaphore and redlock do: under contention it is the
 * peers' algorithm (the releasing client takes the lock straight back) on the
 * contract's data. A reference in the cycle scenarios and between clients and
 * processes with no think time (never a peer, not charted): a peer whose lock is a
 * plain SET NX may run ahead of any implementation of the contract, and this row says
 * by how much in the same run.
 */
import { PEER_RETRY_MS } from '../config';
import { openEvalshaFloor } from './raw';
import type { ImplDef } from './types';

/** The default key retention (holdfast's DEFAULT_RETENTION): the fencing counter's TTL. */
export const RETENTION = 86_400_000;
const ACQUIRE = `if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  local token = redis.call('incr', KEYS[2])
  redis.call('pexpire', KEYS[2], ${RETENTION})
  return {1, token}
end
return {0, redis.call('pttl', KEYS[1])}`;
const RELEASE = `if redis.call('hget', KEYS[1], ARGV[1]) == false then return {0} end
redis.call('del', KEYS[1])
return {2}`;
const openContractFloor = (ports: number[]) => openEvalshaFloor(ports, { acquire: ACQUIRE, release: RELEASE, prefix: 'contract', label: 'contract floor', pollMs: PEER_RETRY_MS });

export const CONTRACT_FLOOR: ImplDef = { id: 'contract-floor', label: "contract floor (DESIGN.md's hash + fencing, minimal Lua)", family: 'contract-floor', open: openContractFloor };
