/**
 * The floor: holdfast's own acquire/release Lua scripts called by EVALSHA on one
 * connection per master, retried every POLL_MS under contention.
 *
 * This is the one place the bench depends on holdfast internals: the working tree's
 * generated script sources (the .lua files with their shared preludes, as the library
 * sends them) and the scripts' KEYS/ARGV protocol. The floor is always the working
 * tree's, also for a --baseline run, so both holdfast versions are measured against
 * the same floor.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type Redis from 'ioredis';
import { LEASE, MAX_WAIT_MS, POLL_MS } from '../config';
import { connect, quitAll } from './connect';
import type { Runner, Worker } from './types';

const LIB = path.join(__dirname, '..', '..', '..', 'lib');
/** Where scripts/embed-lua.mjs writes the sources: the store layout first, then the older one. */
const SOURCE_MODULES = [path.join(LIB, 'store', 'scripts', 'sources.ts'), path.join(LIB, 'lua', 'index.ts')];
let scripts: { acquire: string; release: string } | undefined;
let ownerSeq = 0;

function rawLua(): { acquire: string; release: string } {
  if (scripts) return scripts;
  const file = SOURCE_MODULES.find((f) => fs.existsSync(f));
  if (!file) throw new Error(`raw floor: no script sources at ${SOURCE_MODULES.join(' or ')}`);
  // Loaded through tsx like the library itself.
  const mod = require(file) as { acquire?: unknown; release?: unknown };
  if (typeof mod.acquire !== 'string' || typeof mod.release !== 'string') throw new Error(`raw floor: ${file} exports no acquire/release script`);
  scripts = { acquire: mod.acquire, release: mod.release };
  return scripts;
}

export function openRaw(ports: number[]): Promise<Runner> {
  const lua = rawLua();
  // No waiting list (no client id, no list keys): the floor polls, like quorum mode's
  // waiters, and sends what quorum mode sends (acquireArgs/releaseArgs leave the default
  // key retention and publish verb off). The channel is key + ':ch'.
  return openEvalshaFloor(ports, { acquire: lua.acquire, release: lua.release, prefix: 'raw', label: 'raw' });
}

/** A floor's scripts and how its workers name their keys and owners, poll and report. */
export interface EvalshaFloor {
  /** acquire(KEYS: lock, fence, the client's mark; ARGV: owner, lease) -> {1, token} | {0, ...}. */
  acquire: string;
  /** release(KEYS: lock; ARGV: owner) -> {2} when released. */
  release: string;
  /** Keys `<prefix>:{<name>}`, owners `<prefix>-<pid>-<n>`. */
  prefix: string;
  /** Names the floor in its errors. */
  label: string;
  /** A refused worker's poll interval (default POLL_MS). */
  pollMs?: number;
}

/** A floor over two scripts called by EVALSHA, one connection per master, polling while refused. */
export async function openEvalshaFloor(ports: number[], floor: EvalshaFloor): Promise<Runner> {
  const conns = await Promise.all(ports.map(connect));
  const [acquireSha, releaseSha] = await loadScripts(conns, floor.acquire, floor.release);
  return {
    worker(name) {
      const key = `${floor.prefix}:{${name}}`;
      const fence = `${key}:fence`;
      const owner = `${floor.prefix}-${process.pid}-${++ownerSeq}`;
      // The third key: the client's mark on the server that acquire.lua reads (a server the
      // client has met, see that script); in the name's slot. A floor of its own ignores it.
      const mark = `${key}:met`;
      const acquireOn = (c: Redis) => c.evalsha(acquireSha, 3, key, fence, mark, owner, LEASE) as Promise<number[]>;
      const releaseOn = (c: Redis) => c.evalsha(releaseSha, 1, key, owner) as Promise<number[]>;
      return pollingWorker(conns, acquireOn, releaseOn, floor.label, floor.pollMs);
    },
    close: () => quitAll(conns),
  };
}

/**
 * A worker over one EVALSHA acquire and release per master that polls every `pollMs`
 * (default POLL_MS) while refused: one master, or several in parallel (Promise.all, held on a majority;
 * a refused round gives back what it got). `label` names the floor in its errors.
 */
function pollingWorker(conns: Redis[], acquireOn: (c: Redis) => Promise<number[]>, releaseOn: (c: Redis) => Promise<number[]>, label: string, pollMs = POLL_MS): Worker {
  if (conns.length === 1) {
    const c = conns[0];
    return {
      async acquire() {
        const giveUp = performance.now() + MAX_WAIT_MS;
        while ((await acquireOn(c))[0] !== 1) {
          if (performance.now() > giveUp) throw new Error(`${label}: not acquired within ${MAX_WAIT_MS} ms`);
          await sleep(pollMs);
        }
      },
      async release() {
        const reply = await releaseOn(c);
        if (reply[0] !== 2) throw new Error(`${label} release: unexpected reply ${JSON.stringify(reply)}`);
      },
    };
  }
  const quorum = Math.floor(conns.length / 2) + 1;
  return {
    async acquire() {
      const giveUp = performance.now() + MAX_WAIT_MS;
      for (;;) {
        const replies = await Promise.all(conns.map(acquireOn));
        if (replies.filter((r) => r[0] === 1).length >= quorum) return;
        await Promise.all(conns.map(releaseOn));
        if (performance.now() > giveUp) throw new Error(`${label} quorum: not acquired within ${MAX_WAIT_MS} ms`);
        await sleep(pollMs);
      }
    },
    async release() {
      await Promise.all(conns.map(releaseOn));
    },
  };
}

/** Loads the scripts on every connection; their SHAs, in order. */
export async function loadScripts(conns: Redis[], ...sources: string[]): Promise<string[]> {
  const loaded = await Promise.all(conns.map((c) => Promise.all(sources.map(async (src) => String(await c.script('LOAD', src))))));
  return loaded[0];
}
