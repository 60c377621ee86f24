import { IoredisClient, type IoredisConnection } from './ioredis.js';
import type { Arg } from './redis-client.js';

/**
 * ioredis-mock (users' unit tests: one process, no server): an ioredis look-alike that
 * tells its state by `connected` (true from construction until disconnect()) and has no
 * `status`, which is how it is told from ioredis.
 */
export function isIoredisMock(value: object): boolean {
  const c = value as Record<string, unknown>;
  return c.status === undefined && typeof c.connected === 'boolean';
}

/**
 * The mock runs scripts in fengari, whose tables iterate in an order the mock's reply
 * conversion does not expect: a table filled by assignment (`out[#out + 1] = x`) with
 * more than one element comes back as nothing. Each script runs wrapped so that its
 * reply, nested tables included, is rebuilt last index first, the order that conversion
 * reads.
 *
 * The wrapper also answers TIME from the process clock, which the call passes as its
 * last argument (taken off ARGV before the script runs). The mock's own TIME puts
 * `Math.round(ms / 1000)` beside hrtime's sub-second part, so it runs up to a second
 * ahead of or behind the clock the mock expires keys by (Date.now()), and jumps by a
 * second twice a second: the queue's deadlines, a semaphore's permits and the read
 * holds, dated by the scripts' clock, would end up to a second early or late against a
 * lease counted by the client. Redis runs the scripts as they are.
 */
function wrapped(lua: string): string {
  return `local holdfastTime = {string.match(table.remove(ARGV), '^(%d+) (%d+)$')}
local function holdfastClocked(send)
  return function(command, ...)
    if type(command) == 'string' and string.lower(command) == 'time' then return {holdfastTime[1], holdfastTime[2]} end
    return send(command, ...)
  end
end
local redis = setmetatable({call = holdfastClocked(redis.call), pcall = holdfastClocked(redis.pcall)}, {__index = redis})
local function holdfastReply(v)
  if type(v) ~= 'table' then return v end
  local r = {}
  for i = #v, 1, -1 do r[i] = holdfastReply(v[i]) end
  return r
end
return holdfastReply((function()
${lua}
end)())`;
}

/** TIME's reply, seconds and microseconds, from the clock the mock expires keys by. */
function processTime(): string {
  const ms = Date.now();
  return `${Math.floor(ms / 1000)} ${(ms % 1000) * 1000}`;
}

interface Mock {
  readonly connected: boolean;
}

/**
 * The ioredis adapter over ioredis-mock. EVALSHA of a script always finds nothing (the
 * mock caches the wrapped script under its own digest), so each call falls back to EVAL:
 * two calls of the mock per script, which a unit test does not notice.
 */
export class IoredisMockClient extends IoredisClient {
  private readonly mock: Mock;

  constructor(connection: IoredisConnection) {
    super(connection);
    this.mock = connection as unknown as Mock;
  }

  override eval(lua: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return super.eval(wrapped(lua), keys, [...args, processTime()]);
  }

  /** The mock has no WAIT and throws at the call, where ioredis would reject. */
  override wait(replicas: number, timeout: number): Promise<number> {
    return Promise.resolve().then(() => super.wait(replicas, timeout));
  }

  override get ready(): boolean {
    return this.mock.connected;
  }

  override get down(): boolean {
    return !this.mock.connected;
  }
}
