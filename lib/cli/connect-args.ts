// The options every command that talks to Redis shares: where (--redis, several for a
// quorum), the key prefix, how long to try to connect, and the password, which comes
// from the environment so that it does not show in `ps`.
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_REDIS_URL, PASSWORD_ENV } from './defaults.js';
import { parseDuration } from './duration.js';
import { single, type Flags, type FlagSpecs } from './flags.js';
import { UsageError } from './usage-error.js';

export interface ConnectOptions {
  /** One URL: a single Redis. Several: quorum mode over independent masters. Never repeated. */
  urls: string[];
  /** $REDISCLI_AUTH: the password for each URL that carries none. */
  password: string | undefined;
  /** Key prefix; undefined: the library's default. Never contains { or }. */
  prefix: string | undefined;
  connectTimeout: number;
  /** What to tell the user before connecting (a password on the command line). */
  warnings: string[];
}

export const CONNECT_FLAGS: FlagSpecs = {
  redis: { type: 'string', multiple: true },
  prefix: { type: 'string' },
  'connect-timeout': { type: 'string' },
};

function checkUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--redis takes a URL like redis://host:6379, got '${text}'`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new UsageError(`--redis takes a redis:// or rediss:// URL, got '${text}'`);
  }
  return text;
}

export function readConnectOptions(flags: Flags, env: NodeJS.ProcessEnv): ConnectOptions {
  const given = flags.given.get('redis') ?? [];
  const urls = given.map(checkUrl);
  if (urls.length === 0) urls.push(checkUrl(env.REDIS_URL || DEFAULT_REDIS_URL));
  if (new Set(urls).size !== urls.length) throw new UsageError('the same --redis URL is given twice: quorum mode needs independent masters');
  const prefix = single(flags, 'prefix');
  if (prefix !== undefined && /[{}]/.test(prefix)) throw new UsageError('--prefix must not contain { or }: the lock name goes in the hash tag');
  const timeout = single(flags, 'connect-timeout');
  const warnings = given.some((u) => new URL(u).password !== '')
    ? [`warning: a password in a --redis URL is visible to every user of this machine (ps); put it in ${PASSWORD_ENV} instead`]
    : [];
  return {
    urls,
    password: env[PASSWORD_ENV] || undefined,
    prefix,
    connectTimeout: timeout === undefined ? DEFAULT_CONNECT_TIMEOUT_MS : parseDuration('--connect-timeout', timeout, 1),
    warnings,
  };
}
