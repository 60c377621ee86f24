/**
 * Scenario 7: read-mostly load on one name. 16 loops in this process, each holding
 * for 1 ms (a read of something slow) then letting go: through the plain lock (every
 * hold exclusive: the floor here), the read-write lock's read side (all share), and
 * the read-write lock with one write in ten. The ratio column is × the plain lock.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lock } from '../../../lib';
import { lockClientClass } from '../impls/holdfast-module';
import { LEASE } from '../config';
import type { Env } from '../env';
import { connect, quitAll } from '../impls/connect';
import type { ImplDef, Runner } from '../impls/types';
import { noteError } from '../log';
import type { ScenarioResult } from '../results';
import { cycleScenario } from './cycle';

const HOLD_MS = 1;
let runs = 0;

/** `writes`: share of holds that write; null: the plain lock for every hold. */
function openReadMostly(writes: number | null): (ports: number[]) => Promise<Runner> {
  return async (ports) => {
    const conns = await Promise.all(ports.map(connect));
    const LockClient = lockClientClass();
    const client = new LockClient(conns[0], { watchdogTimeout: LEASE });
    client.on('error', (e) => noteError('readmostly error event', e));
    // One name per run, shared by every loop (cycleScenario names a key per loop).
    const name = `readmostly:${process.pid}:${++runs}`;
    return {
      worker() {
        const rw = client.getReadWriteLock(name);
        const plain = client.getLock(name);
        let held: Lock = plain;
        return {
          acquire: () => {
            held = writes === null ? plain : Math.random() < writes ? rw.writeLock() : rw.readLock();
            return held.lock();
          },
          release: async () => {
            await sleep(HOLD_MS);
            await held.unlock();
          },
        };
      },
      async close() {
        await client.close();
        await quitAll(conns);
      },
    };
  };
}

const IMPLS: ImplDef[] = [
  { id: 'lock', label: 'holdfast lock (every hold exclusive)', family: 'holdfast', open: openReadMostly(null) },
  { id: 'rw-read', label: 'read-write lock, all reads', family: 'holdfast', open: openReadMostly(0) },
  { id: 'rw-10%-write', label: 'read-write lock, 1 write in 10', family: 'holdfast-fair', open: openReadMostly(0.1) },
];

export function readMostly(env: Env): Promise<ScenarioResult> {
  return cycleScenario(env, {
    id: 'readmostly',
    title: `7. read-mostly: 16 loops on one name, ${HOLD_MS} ms per hold (ratio: × the plain lock)`,
    impls: IMPLS,
    ports: [env.single.port],
    admins: [env.admin],
    loops: 16,
    durationMs: env.cfg.parMs,
  });
}
