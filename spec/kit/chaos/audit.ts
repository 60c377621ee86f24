/**
 * What the chaos run checks on the servers themselves: every client connection came
 * through a worker's proxy (else a stall would not cut that worker off), and, after the
 * workers closed, no lock keys (but the `:fence` counters) and no pub/sub channels or
 * subscribers are left.
 */
import type Redis from 'ioredis';
import { ADMIN_NAME, LOCKS } from './options';
import type { Violation } from './records';
import { sleep, withDeadline } from './timing';
import type { ChaosServers } from './topology';
import type { WorkerSlot } from './workers';

/**
 * Every client connection on every node came through one of the workers' proxies (or is
 * the orchestrator's own). Only called when no rawCommand() connection of the
 * orchestrator may still be open. Sentinel mode has no proxies: the workers follow the
 * sentinels to the primary.
 */
export async function checkProxied(servers: ChaosServers, workers: readonly WorkerSlot[], when: string, seen: { clients: number; shardSubscribers: number }, violations: Violation[]): Promise<void> {
  if (servers.mode === 'sentinel') return;
  const viaProxy = () => workers.flatMap((s) => s.proxies.flatMap((p) => p.upstreamPorts));
  const before = viaProxy();
  const lists = await Promise.all(servers.admins.map((a) => withDeadline(a.client('LIST') as Promise<string>, 2_000, 'CLIENT LIST')));
  const known = new Set([...before, ...viaProxy()]);
  lists.forEach((list, node) => {
    for (const line of list.split('\n').filter(Boolean)) {
      const name = / name=(\S*)/.exec(line)?.[1] ?? '';
      // A MIGRATE's connection from another node (slot migration), cached by that node for 10 s.
      if (name === ADMIN_NAME || / cmd=restore-asking /.test(line)) continue;
      // A replication link (Cluster with replicas): the replica's on its master (flag S), the master's on its replica (M).
      if (/ flags=\S*[SM]/.test(line)) continue;
      const addr = / addr=(\S+)/.exec(line)?.[1] ?? '?';
      seen.clients++;
      if (name.includes('ssubscriber')) seen.shardSubscribers++;
      if (!known.has(Number(addr.split(':').pop()))) {
        violations.push({ kind: 'proxy', message: `${when}: client ${addr} of ${servers.mode === 'cluster' ? 'node' : 'master'} ${node} did not come through a worker's proxy (${line.trim()})` });
      }
    }
  });
}

/**
 * After close, while the workers' connections are still open: no lock keys (those of
 * killed workers expire within a lease; a killed waiter's place in a queue, and the
 * queue with it, lives up to two heartbeat leases: scripts/_queue.lua), no channels.
 * Returns how many keys and channels were left.
 */
export async function checkLeftovers(servers: ChaosServers, lease: number, violations: Violation[]): Promise<{ leftovers: number; fences: number }> {
  const { admins } = servers;
  const leakDeadline = Date.now() + lease * 2 + 1_000;
  const allKeys = async () => (await Promise.all(admins.map((a, i) => a.keys('holdfast:*').then((ks) => ks.map((k) => `${i}:${k}`))))).flat();
  let leftover: string[] = [];
  for (;;) {
    // Kept with a TTL on purpose: fencing counters (keyRetention) and quorum mode's
    // marks of the clients on each master (acquire.lua).
    leftover = (await allKeys()).filter((k) => !k.endsWith(':fence') && !k.includes(':holdfast:met:'));
    if (leftover.length === 0 || Date.now() > leakDeadline) break;
    await sleep(100);
  }
  if (leftover.length > 0) violations.push({ kind: 'leak', message: `lock keys left after close (master:key): ${leftover.join(', ')}` });
  let channelCount = 0;
  for (const [i, admin] of admins.entries()) {
    // Sentinel mode: the sentinels' own channel (__sentinel__:hello) is not ours.
    const channels = (await admin.pubsub('CHANNELS', 'holdfast:*')) as string[];
    channelCount += channels.length;
    if (channels.length > 0) violations.push({ kind: 'leak', message: `pub/sub channels left after close on master ${i}: ${channels.join(', ')}` });
    const numsub = (await admin.pubsub('NUMSUB', ...lockChannels())) as (string | number)[];
    for (let j = 0; j < numsub.length; j += 2) {
      if (Number(numsub[j + 1]) > 0) violations.push({ kind: 'leak', message: `${numsub[j]} still has ${numsub[j + 1]} subscriber(s) on master ${i}` });
    }
    if (servers.mode === 'cluster') channelCount += await shardLeaks(admin, i, violations);
  }
  const fences = (await allKeys()).filter((k) => k.endsWith(':fence')).length;
  return { leftovers: leftover.length + channelCount, fences };
}

const lockChannels = () => LOCKS.flatMap((l) => [`holdfast:{${l}}:ch`, `holdfast:{${l}}:next`]);

/** Cluster mode: shard channels left on a node (SSUBSCRIBE lives per shard, not in PUBSUB CHANNELS). */
async function shardLeaks(admin: Redis, node: number, violations: Violation[]): Promise<number> {
  const channels = (await admin.call('PUBSUB', 'SHARDCHANNELS')) as string[];
  if (channels.length > 0) violations.push({ kind: 'leak', message: `shard channels left after close on node ${node}: ${channels.join(', ')}` });
  const numsub = (await admin.call('PUBSUB', 'SHARDNUMSUB', ...lockChannels())) as (string | number)[];
  for (let j = 0; j < numsub.length; j += 2) {
    if (Number(numsub[j + 1]) > 0) violations.push({ kind: 'leak', message: `${numsub[j]} still has ${numsub[j + 1]} shard subscriber(s) on node ${node}` });
  }
  return channels.length;
}
