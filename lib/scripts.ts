import { createHash } from 'node:crypto';
import type { Connection } from './connection';
import acquireLua from './lua/acquire.lua';
import releaseLua from './lua/release.lua';
import renewLua from './lua/renew.lua';
import forceUnlockLua from './lua/force-unlock.lua';
import fenceFloorLua from './lua/fence-floor.lua';
import fairAcquireLua from './lua/fair-acquire.lua';
import fairReleaseLua from './lua/fair-release.lua';
import fairLeaveLua from './lua/fair-leave.lua';

/**
 * A Lua script called by EVALSHA, falling back to EVAL (which also caches it) when the
 * server answers NOSCRIPT: a restarted, flushed or failed-over Redis has lost it.
 */
export class Script {
  readonly sha: string;

  constructor(readonly name: string, readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(connection: Connection, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await connection.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return connection.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}

export const scripts = {
  acquire: new Script('acquire', acquireLua),
  release: new Script('release', releaseLua),
  renew: new Script('renew', renewLua),
  forceUnlock: new Script('force-unlock', forceUnlockLua),
  fenceFloor: new Script('fence-floor', fenceFloorLua),
  fairAcquire: new Script('fair-acquire', fairAcquireLua),
  fairRelease: new Script('fair-release', fairReleaseLua),
  fairLeave: new Script('fair-leave', fairLeaveLua),
};
