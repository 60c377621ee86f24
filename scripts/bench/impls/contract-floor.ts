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
import type Redis from 'ioredis';
import { LEASE, PEER_RETRY_MS } from '../config';
import { connect, quitAll } from './connect';
import { loadScripts, pollingWorker } from './raw';
import type { ImplDef, Runner } from './types';

const RETENTION = 86_400_000;
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
let ownerSeq = 0;

async function openContractFloor(ports: number[]): Promise<Runner> {
  const conns = await Promise.all(ports.map(connect));
  const [acquireSha, releaseSha] = await loadScripts(conns, ACQUIRE, RELEASE);
  return {
    worker(name) {
      const key = `contract:{${name}}`;
      const fence = `${key}:fence`;
      const owner = `contract-${process.pid}-${++ownerSeq}`;
      const acquireOn = (c: Redis) => c.evalsha(acquireSha, 2, key, fence, owner, LEASE) as Promise<number[]>;
      const releaseOn = (c: Redis) => c.evalsha(releaseSha, 1, key, owner) as Promise<number[]>;
      return pollingWorker(conns, acquireOn, releaseOn, 'contract floor', PEER_RETRY_MS);
    },
    close: () => quitAll(conns),
  };
}

export const CONTRACT_FLOOR: ImplDef = { id: 'contract-floor', label: "contract floor (DESIGN.md's hash + fencing, minimal Lua)", family: 'contract-floor', open: openContractFloor };
