/**
 * The fenced register: the guarded resource of the chaos run, in a redis-server of its
 * own that no fault touches. A holder writes `(name, token)` to it; it accepts the write
 * only when the token is at least the highest it accepted for that name (one Lua script,
 * so the check and the write are one step). Late writes of a holder that lost its lock
 * are then refused, and counted: the history checker (register-check.ts) proves that
 * fencing stopped them, instead of assuming it.
 */
import Redis from 'ioredis';

const KEY = 'chaos:register';
/** KEYS[1] the register hash; ARGV name, token. 1: accepted, 0: fenced off. */
const SCRIPT = `
local highest = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '-1')
local token = tonumber(ARGV[2])
if token < highest then return 0 end
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
return 1`;

export class FencedRegister {
  private readonly redis: Redis;

  constructor(port: number) {
    // Direct, never through a worker's proxy: the faults must not reach the register.
    this.redis = new Redis({ host: '127.0.0.1', port, retryStrategy: () => 50, maxRetriesPerRequest: null, connectionName: 'chaos-register' });
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('fencedWrite', { numberOfKeys: 1, lua: SCRIPT });
  }

  /** True when the register accepted the write. */
  async write(name: string, token: number): Promise<boolean> {
    const call = (this.redis as unknown as { fencedWrite(key: string, name: string, token: string): Promise<number> }).fencedWrite;
    return (await call.call(this.redis, KEY, name, String(token))) === 1;
  }

  disconnect(): void {
    this.redis.disconnect();
  }
}
