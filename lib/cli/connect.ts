// Redis connections from --redis URLs: each opened with the settings the bin needs, and
// the start bounded by --connect-timeout and by a signal.
import type Redis from 'ioredis';
import { redisConstructor } from './client-library.js';
import { message } from './io.js';

/** A URL as shown in messages: without its password. */
export function showUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/**
 * Opens a connection and waits until it is ready. `ready` rejects with the first
 * connection error (refused, unknown host, auth), after `timeout`, or with the signal's
 * reason; either way the connection keeps reconnecting in the background (if Redis
 * goes away later, or comes up later: a master of a quorum may), until disconnected.
 */
export function connect(url: string, password: string | undefined, timeout: number, signal: AbortSignal): { redis: Redis; ready: Promise<void> } {
  const Client = redisConstructor();
  const redis = new Client(url, {
    // $REDISCLI_AUTH, for a URL without a password of its own (ioredis lets the URL's win).
    ...(password === undefined || new URL(url).password !== '' ? {} : { password }),
    lazyConnect: true,
    connectTimeout: timeout,
    // A command sent while the connection is down fails after one reconnection attempt
    // instead of queueing forever; holdfast bounds each call on top of this.
    maxRetriesPerRequest: 1,
    // Keep reconnecting (while the command runs, a short Redis outage must not lose
    // the lock before its lease ends), at most once a quarter second.
    retryStrategy: (times) => Math.min(50 * times, 250),
    // disconnect() waits this long for the server to close its end: an unresponsive
    // server must not keep holdfast from exiting.
    disconnectTimeout: 200,
  });
  const ready = new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const onError = (error: Error) => done(new Error(`cannot connect to ${showUrl(url)}: ${message(error)}`));
    const onAbort = () => done(signal.reason as Error);
    const timer = setTimeout(() => done(new Error(`cannot connect to ${showUrl(url)}: no answer within ${timeout} ms`)), timeout);
    redis.once('ready', onReady);
    redis.on('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
    redis.connect().catch(() => undefined); // the 'error' event carries the reason
  });
  return { redis, ready };
}

export interface Connections {
  /** One per URL, in their order, reachable or not: the caller disconnects them all. */
  redis: Redis[];
  /** Resolves with one message per URL that could not be reached in time. */
  failures: Promise<string[]>;
  /** How many must be reachable: a majority (1 of 1 for a single Redis). */
  needed: number;
}

/** Connects to every URL at once; see connect() for the bounds. */
export function connectAll(urls: readonly string[], password: string | undefined, timeout: number, signal: AbortSignal): Connections {
  const attempts = urls.map((url) => connect(url, password, timeout, signal));
  for (const a of attempts) {
    // Errors after the start (a connection reconnecting) surface through the lock's
    // renewalFailed and lost events; unheard, ioredis would print each one.
    a.redis.on('error', () => undefined);
  }
  const failures = Promise.allSettled(attempts.map((a) => a.ready)).then((results) =>
    results.flatMap((r) => (r.status === 'rejected' ? [message(r.reason)] : [])),
  );
  return { redis: attempts.map((a) => a.redis), failures, needed: Math.floor(urls.length / 2) + 1 };
}

/**
 * Tells which URLs could not be reached and whether enough could: false (after saying
 * why) when fewer than a majority answered; true, with a warning per missing master,
 * when quorum mode goes on with a majority.
 */
export function enoughReached(failures: readonly string[], total: number, needed: number, say: (line: string) => void): boolean {
  const reachable = total - failures.length;
  if (reachable < needed) {
    for (const f of failures) say(f);
    if (total > 1) say(`${needed} of ${total} masters are needed; ${reachable} reachable`);
    return false;
  }
  for (const f of failures) say(`warning: ${f} (continuing with a majority of masters)`);
  return true;
}
