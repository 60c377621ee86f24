import { createHash } from 'node:crypto';
import type { Connection } from './connection.js';
import * as lua from './lua/index.js';

/**
 * A Lua script called by EVALSHA, falling back to EVAL (which also caches it) when the
 * server answers NOSCRIPT: a restarted, flushed or failed-over Redis has lost it.
 */
export class Script {
  readonly sha: string;

  constructor(readonly name: string, readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  // Not async: one promise less per call on the hot path (two per lock/unlock cycle).
  run(connection: Connection, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return connection.evalsha(this.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return connection.eval(this.lua, keys.length, ...keys, ...args);
    });
  }
}

export const scripts = {
  acquire: new Script('acquire', lua.acquire),
  release: new Script('release', lua.release),
  renew: new Script('renew', lua.renew),
  forceUnlock: new Script('force-unlock', lua.forceUnlock),
  fenceFloor: new Script('fence-floor', lua.fenceFloor),
  setLevel: new Script('set-level', lua.setLevel),
  restore: new Script('restore', lua.restore),
  fairAcquire: new Script('fair-acquire', lua.fairAcquire),
  fairRelease: new Script('fair-release', lua.fairRelease),
  fairLeave: new Script('fair-leave', lua.fairLeave),
};
