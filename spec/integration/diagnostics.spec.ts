import diagnostics from 'node:diagnostics_channel';
import vm from 'node:vm';
import { EventEmitter } from 'eventemitter3';
import Redis from 'ioredis';
import { LockClient, type AcquiredEvent, type ClientEvents, type LostEvent, type ReleasedEvent, type RenewedEvent } from '../../lib';
import { EventHub } from '../../lib/engine/event-hub';
import { startServer, type RedisServer } from '../kit/servers';
import { nextEvent, withTimeout } from '../helpers/wait';

// Every event also goes out on node:diagnostics_channel `holdfast:<event>`, with the
// primitive's kind, at no cost while nobody subscribes; background errors are never
// silent: 'error', or a process warning when nobody listens (or the listener throws).

let server: RedisServer;
let redis: Redis;
let locks: LockClient;
let n = 0;
const name = () => `diag-${++n}`;
/** The real process: Node emits 'warning' there, not on the copy a spec sees. */
const hostProcess = vm.runInThisContext('process') as NodeJS.Process;

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});
beforeEach(() => {
  locks = new LockClient(redis, { watchdogTimeout: 600 });
});
afterEach(async () => {
  await locks.close();
});

/** Messages of `holdfast:<event>` about lockName, until the returned stop is called. */
function subscribe<T extends { name: string }>(event: string, lockName: string): { messages: T[]; stop: () => void } {
  const messages: T[] = [];
  const onMessage = (message: unknown) => {
    if ((message as T).name === lockName) messages.push(message as T);
  };
  diagnostics.subscribe(`holdfast:${event}`, onMessage);
  return { messages, stop: () => diagnostics.unsubscribe(`holdfast:${event}`, onMessage) };
}

/** The next process warning of type HoldfastWarning. */
function nextWarning(timeoutMs: number): Promise<Error> {
  let onWarning: (w: Error) => void = () => undefined;
  const warned = new Promise<Error>((resolve) => {
    onWarning = (w: Error) => {
      if (w.name === 'HoldfastWarning') resolve(w);
    };
    hostProcess.on('warning', onWarning);
  });
  return withTimeout(warned, timeoutMs, 'a HoldfastWarning').finally(() => hostProcess.off('warning', onWarning));
}

describe('diagnostics channels', () => {
  it('publishes acquired, renewed, released and lost on holdfast:<event>, with the kind, and no listener on the client', async () => {
    const plain = locks.getLock(name());
    const fair = locks.getFairLock(name());
    const subscriptions = {
      acquired: subscribe<AcquiredEvent>('acquired', plain.name),
      renewed: subscribe<RenewedEvent>('renewed', plain.name),
      released: subscribe<ReleasedEvent>('released', plain.name),
      fairAcquired: subscribe<AcquiredEvent>('acquired', fair.name),
      lost: subscribe<LostEvent>('lost', fair.name),
    };
    try {
      const held = await plain.acquire();
      const renewed = nextEvent(plain, 'renewed', 1_000);
      await renewed;
      await held.release();
      await fair.lock();
      await fair.forceUnlock(); // the hold is lost ('deleted')
      await expect(fair.unlock()).rejects.toThrow(/lost/);

      const { acquired, released, fairAcquired, lost } = subscriptions;
      expect(acquired.messages).toEqual([{ name: plain.name, owner: expect.any(String), kind: 'lock', token: expect.any(Number), waitedMs: expect.any(Number) }]);
      expect(subscriptions.renewed.messages[0]).toEqual({ name: plain.name, owner: acquired.messages[0].owner, kind: 'lock', leaseTime: 600 });
      expect(released.messages).toEqual([{ name: plain.name, owner: acquired.messages[0].owner, kind: 'lock' }]);
      expect(fairAcquired.messages).toEqual([expect.objectContaining({ name: fair.name, kind: 'fair' })]);
      expect(lost.messages).toEqual([expect.objectContaining({ name: fair.name, kind: 'fair', reason: 'deleted', error: expect.any(Error) })]);
      expect(locks.eventNames()).toEqual([]);
    } finally {
      for (const s of Object.values(subscriptions)) s.stop();
    }
  });

  it('hands the emitters and the channel the same payload, kind included', async () => {
    const lock = locks.getLock(name());
    const channel = subscribe<AcquiredEvent>('acquired', lock.name);
    try {
      const fromEmitter = nextEvent<AcquiredEvent>(lock, 'acquired', 1_000);
      await lock.run(async () => undefined);
      const event = await fromEmitter;
      expect(event.kind).toBe('lock');
      expect(channel.messages).toEqual([event]);
      expect(channel.messages[0]).toBe(event);
    } finally {
      channel.stop();
    }
  });

  it('builds no payload while nobody listens or subscribes, and one per event otherwise', () => {
    const hub = new EventHub(new EventEmitter<ClientEvents>());
    let built = 0;
    const payload = () => {
      built += 1;
      return { name: 'x', owner: 'o', kind: 'lock' as const };
    };
    hub.publish('released', 'x', payload);
    expect(built).toBe(0);

    const channel = diagnostics.channel('holdfast:released');
    expect(channel.hasSubscribers).toBe(false);
    const received: unknown[] = [];
    const onMessage = (m: unknown) => received.push(m);
    channel.subscribe(onMessage);
    try {
      hub.publish('released', 'x', payload);
      expect(built).toBe(1);
      expect(received).toEqual([{ name: 'x', owner: 'o', kind: 'lock' }]);
    } finally {
      channel.unsubscribe(onMessage);
    }
    hub.publish('released', 'x', payload);
    expect(built).toBe(1);
    hub.of('x', true).on('released', () => undefined);
    hub.publish('released', 'x', payload);
    expect(built).toBe(2);
    expect(received).toHaveLength(1);
  });
});

describe('background errors', () => {
  it("reports a throwing listener's error as 'error' (and on holdfast:error), and the other listeners still get the event", async () => {
    const lock = locks.getLock(name());
    const boom = new Error('listener bug');
    locks.on('acquired', () => {
      throw boom;
    });
    const handleGotIt = nextEvent<AcquiredEvent>(lock, 'acquired', 1_000);
    const reported = nextEvent<Error>(locks, 'error', 1_000);
    const channel: unknown[] = [];
    const onMessage = (m: unknown) => channel.push(m);
    diagnostics.subscribe('holdfast:error', onMessage);
    try {
      await expect(lock.run(async () => 'done')).resolves.toBe('done');
      expect(await reported).toBe(boom);
      expect((await handleGotIt).name).toBe(lock.name);
      expect(channel).toContain(boom);
    } finally {
      diagnostics.unsubscribe('holdfast:error', onMessage);
    }
    expect(await redis.exists(`holdfast:{${lock.name}}`)).toBe(0);
  });

  it("turns a background error into a process warning when nobody listens for 'error'", async () => {
    const lock = locks.getLock(name());
    locks.on('released', () => {
      throw new Error('released listener bug');
    });
    const warned = nextWarning(1_000);
    await lock.run(async () => undefined);
    const warning = await warned;
    expect(warning.message).toBe('Error: released listener bug');
    expect(locks.listenerCount('error')).toBe(0);
  });

  it("turns an 'error' listener's own throw into a process warning, never a throw into the lock", async () => {
    const lock = locks.getLock(name());
    locks.on('acquired', () => {
      throw new Error('first');
    });
    locks.on('error', () => {
      throw new Error('error listener bug');
    });
    const warned = nextWarning(1_000);
    await expect(lock.run(async () => 'done')).resolves.toBe('done');
    expect((await warned).message).toBe('Error: error listener bug');
    expect(await redis.exists(`holdfast:{${lock.name}}`)).toBe(0);
  });
});
