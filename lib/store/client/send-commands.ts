import type { RedisClientPort } from './redis-client.js';

/** Sends a raw command; in a Cluster to the master of `key`'s slot (any node when undefined). */
export type Send = (key: string | undefined, args: string[]) => Promise<unknown>;

/** The port's plain commands, over a client library that takes a command as its arguments. */
export type SentCommands = Pick<RedisClientPort, 'evalsha' | 'eval' | 'wait' | 'exists' | 'hget' | 'pttl' | 'info'>;

/**
 * The port's plain commands over `send`, for the adapters whose client library takes a
 * raw command (node-redis's sendCommand, GLIDE's customCommand): each adapter keeps only
 * how it routes and fails, in `send`. Scripts are routed by their first key.
 */
export function sendCommands(send: Send): SentCommands {
  return {
    evalsha: (sha, keys, args) => send(keys[0], ['EVALSHA', sha, String(keys.length), ...keys, ...args.map(String)]),
    eval: (lua, keys, args) => send(keys[0], ['EVAL', lua, String(keys.length), ...keys, ...args.map(String)]),
    wait: async (replicas, timeout) => Number(await send(undefined, ['WAIT', String(replicas), String(timeout)])),
    exists: async (key) => Number(await send(key, ['EXISTS', key])),
    hget: async (key, field) => {
      const v = await send(key, ['HGET', key, field]);
      return v === null || v === undefined ? null : String(v);
    },
    pttl: async (key) => Number(await send(key, ['PTTL', key])),
    info: async (section) => String(await send(undefined, ['INFO', section])),
  };
}
