/**
 * Scenario 10 (opt-in: --only multi2): sequential acquire and release of two names
 * together, uncontended, one master. holdfast's getMultiLock against redlock's
 * multi-resource acquire([a, b]) (one script over both keys), next to two plain
 * holdfast locks taken one after the other, and the floor: holdfast's own Lua for
 * each name in turn by EVALSHA. Ratios are to that floor in the same round.
 */
import Redlock, { type Lock as RedlockLock } from 'redlock';
import { lockClientClass } from '../impls/holdfast-module';
import { LEASE } from '../config';
import type { Env } from '../env';
import { connect, quitAll } from '../impls/connect';
import { openRaw } from '../impls/raw';
import type { ImplDef, Runner, Worker } from '../impls/types';
import { noteError } from '../log';
import type { ScenarioResult } from '../results';
import { cycleScenario } from './cycle';

const pairOf = (name: string): [string, string] => [`${name}:a`, `${name}:b`];

/** Two workers of one runner as one: a's then b's acquire, b's then a's release. */
async function openPairOf(open: (ports: number[]) => Promise<Runner>, ports: number[]): Promise<Runner> {
  const runner = await open(ports);
  return {
    worker(name) {
      const [a, b] = pairOf(name).map((n) => runner.worker(n)) as [Worker, Worker];
      return {
        acquire: async () => {
          await a.acquire();
          await b.acquire();
        },
        release: async () => {
          await b.release();
          await a.release();
        },
      };
    },
    close: () => runner.close(),
  };
}

/** holdfast over ioredis: getMultiLock(pair).lock()/unlock(), or two getLock()s in turn. */
async function openHoldfastPair(ports: number[], multi: boolean): Promise<Runner> {
  const conn = await connect(ports[0]!);
  const LockClient = lockClientClass();
  const client = new LockClient(conn, { watchdogTimeout: LEASE });
  client.on('error', (e) => noteError('holdfast multi2 error event', e));
  return {
    worker(name) {
      const pair = pairOf(name);
      if (multi) {
        const both = client.getMultiLock(pair);
        return { acquire: () => both.lock(), release: () => both.unlock() };
      }
      const [a, b] = pair.map((n) => client.getLock(n));
      return {
        acquire: async () => {
          await a!.lock();
          await b!.lock();
        },
        release: async () => {
          await b!.unlock();
          await a!.unlock();
        },
      };
    },
    async close() {
      await client.close();
      await quitAll([conn]);
    },
  };
}

/** redlock v5: one acquire over both resources (its script sets every key or none). */
async function openRedlockPair(ports: number[]): Promise<Runner> {
  const conn = await connect(ports[0]!);
  const redlock = new Redlock([conn], { retryCount: 0 });
  redlock.on('error', () => undefined);
  return {
    worker(name) {
      let held: RedlockLock | undefined;
      return {
        acquire: async () => void (held = await redlock.acquire(pairOf(`redlock:${name}`), LEASE)),
        release: async () => {
          const lock = held;
          held = undefined;
          if (lock) await lock.release();
        },
      };
    },
    close: () => quitAll([conn]),
  };
}

const IMPLS: ImplDef[] = [
  { id: 'raw-pair', label: 'raw floor: holdfast Lua per name, in turn', family: 'raw', open: (ports) => openPairOf(openRaw, ports) },
  { id: 'holdfast-multi2', label: 'holdfast getMultiLock (2 names)', family: 'holdfast', open: (ports) => openHoldfastPair(ports, true) },
  { id: 'holdfast-2locks', label: 'holdfast 2 getLock in turn', family: 'holdfast', open: (ports) => openHoldfastPair(ports, false) },
  { id: 'redlock-multi2', label: 'redlock acquire([a, b])', family: 'redlock', open: openRedlockPair },
];

export function multi2(env: Env): Promise<ScenarioResult> {
  return cycleScenario(env, {
    id: 'multi2',
    title: '10. Uncontended lock+unlock of two names together, sequential',
    impls: IMPLS,
    ports: [env.single.port],
    admins: [env.admin],
    loops: 1,
    durationMs: env.cfg.seqMs,
  });
}
