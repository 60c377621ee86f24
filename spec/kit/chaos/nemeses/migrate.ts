/**
 * Cluster mode: the slot of a held and contended name migrates to another node while
 * the workers use it, as `redis-cli --cluster reshard` does it: the target IMPORTING, the
 * source MIGRATING (commands for keys already moved get ASK, scripts over keys on both
 * sides TRYAGAIN), the keys moved with MIGRATE (their TTLs with them), then every node
 * told the slot's new owner. The source drops the slot's sharded subscribers then, with
 * any grant message in flight to them. Nothing is lost: it excuses nothing.
 */
import { clusterSlot } from '../../../../lib/store/master/slot';
import { rawCommand } from '../../servers';
import { LOCKS, SEMAPHORE } from '../options';
import type { Nemesis } from './nemesis';

export const migrate: Nemesis = {
  async inject(run) {
    const names = run.semaphore ? [...LOCKS, SEMAPHORE.name] : LOCKS;
    const name = run.rng.pick(names);
    const slot = clusterSlot(`holdfast:{${name}}`);
    const owners = await run.servers.lockOwners(run.semaphore);
    const from = [...owners].find(([, locks]) => locks.includes(name))![0];
    // Masters only: a replica (Cluster with replicas) takes no slot.
    const others = (await run.servers.masterIndexes()).filter((i) => i !== from);
    const to = run.rng.pick(others);
    const { servers, admins } = run.servers;
    const src = servers[from]!;
    const dst = servers[to]!;
    const [srcId, dstId] = await Promise.all([rawCommand(src.port, ['CLUSTER', 'MYID']), rawCommand(dst.port, ['CLUSTER', 'MYID'])]);
    const begin = Date.now();
    await rawCommand(dst.port, ['CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', srcId]);
    await rawCommand(src.port, ['CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', dstId]);
    // A moment in the MIGRATING state with the keys still on the source: new keys go by ASK.
    await new Promise((resolve) => setTimeout(resolve, run.rng.int(20, Math.round(run.lease / 2))));
    for (;;) {
      const keys = (await admins[from]!.cluster('GETKEYSINSLOT', slot, 100)) as string[];
      if (keys.length === 0) break;
      await admins[from]!.migrate('127.0.0.1', dst.port, '', 0, 5_000, 'KEYS', ...keys);
    }
    // The target first, then the source, then the rest (as redis-cli does).
    await rawCommand(dst.port, ['CLUSTER', 'SETSLOT', String(slot), 'NODE', dstId]);
    await rawCommand(src.port, ['CLUSTER', 'SETSLOT', String(slot), 'NODE', dstId]);
    await Promise.all(others.filter((i) => i !== to).map((i) => rawCommand(servers[i]!.port, ['CLUSTER', 'SETSLOT', String(slot), 'NODE', dstId])));
    await run.servers.waitClusterOk();
    return { kind: 'migrate', master: from, locks: names.filter((n) => clusterSlot(`holdfast:{${n}}`) === slot), begin, end: Date.now() };
  },
};
