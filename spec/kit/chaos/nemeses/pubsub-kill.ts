/**
 * CLIENT KILL TYPE pubsub on one server (every one but a Cluster, where one node's
 * sharded subscribers go, as a slot migration drops them): every subscriber connection
 * is closed with the messages in flight to it, grants to waiters among them. A waiter
 * must still get in (by its next attempt) and no grant may outlive its lease.
 */
import type { Nemesis } from './nemesis';

export const pubsubKill: Nemesis = {
  async inject(run) {
    const admins = run.servers.mode === 'cluster' ? [run.rng.pick(run.servers.admins)] : run.servers.admins;
    const begin = Date.now();
    await Promise.all(admins.map((a) => a.client('KILL', 'TYPE', 'pubsub').catch(() => 0)));
    return { kind: 'pubsubKill', master: admins.length === 1 ? run.servers.admins.indexOf(admins[0]!) : undefined, begin, end: Date.now() };
  },
};
