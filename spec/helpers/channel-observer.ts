import type Redis from 'ioredis';

/**
 * Listens, on a connection of its own, to a lock's shared channel and to every channel
 * under it (`<channel>:*`, the clients' own ones). settled() returns once every message
 * published before the call has arrived: a PING on a subscribed connection is answered
 * after the messages queued ahead of it.
 */
export async function observeChannels(admin: Redis, channel: string) {
  const observer = admin.duplicate();
  const shared: string[] = [];
  const own: string[] = [];
  observer.on('message', (_channel: string, message: string) => shared.push(message));
  observer.on('pmessage', (_pattern: string, _channel: string, message: string) => own.push(message));
  await observer.subscribe(channel);
  await observer.psubscribe(`${channel}:*`);
  return {
    shared,
    own,
    settled: async (): Promise<void> => {
      await observer.ping();
    },
    /** How many messages each side got, once every one published before the call has arrived. */
    counts: async (): Promise<{ own: number; shared: number }> => {
      await observer.ping();
      return { own: own.length, shared: shared.length };
    },
    close: (): void => observer.disconnect(),
  };
}
