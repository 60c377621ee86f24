import Redis from 'ioredis';
import { LockClient } from '../../lib';
import { unconnectedClient } from '../helpers/unconnected';

// Bad input is rejected with a TypeError or RangeError naming the argument, before
// anything is sent: the client below is lazy and must still be unconnected after.

const current = unconnectedClient();
let redis: Redis;
let locks: LockClient;
beforeEach(() => ({ redis, locks } = current()));

describe('LockClient constructor', () => {
  it.each([
    ['a URL string', 'redis://localhost:6379', /connection must be an ioredis/],
    ['an empty object', {}, /connection must be an ioredis/],
    ['an array of objects', [{}], /connection\[0\] must be an ioredis Redis/],
    ['an empty array', [], /empty array/],
    ['null', null, /connection must be/],
    ['undefined', undefined, /connection must be/],
  ])('rejects %s with a TypeError', (_, value, message) => {
    expect(() => new LockClient(value as never)).toThrow(TypeError);
    expect(() => new LockClient(value as never)).toThrow(message);
  });

  it('rejects the same master twice in quorum mode', () => {
    expect(() => new LockClient([redis, redis])).toThrow(/same client appears twice/);
  });

  it.each([
    [{ watchdogTimeout: 50 }, RangeError, /options.watchdogTimeout must be at least 100/],
    [{ watchdogTimeout: Number.NaN }, TypeError, /options.watchdogTimeout must be a finite number/],
    [{ watchdogTimeout: Infinity }, TypeError, /options.watchdogTimeout/],
    [{ watchdogTimeout: 30 * 86_400_000 }, RangeError, /options.watchdogTimeout must be at most/],
    [{ keyPrefix: 5 }, TypeError, /options.keyPrefix must be a string/],
    [{ keyPrefix: 'a{b}' }, RangeError, /options.keyPrefix must not contain/],
    [{ driftFactor: 0.7 }, RangeError, /options.driftFactor/],
    [{ commandTimeout: 0 }, RangeError, /options.commandTimeout/],
    [{ watchdogTimout: 1000 }, TypeError, /unknown option 'watchdogTimout'/],
    ['fast', TypeError, /options must be an object/],
  ])('rejects options %p', (options, type, message) => {
    expect(() => new LockClient(redis, options as never)).toThrow(type);
    expect(() => new LockClient(redis, options as never)).toThrow(message);
  });
});

describe('getLock', () => {
  it.each([
    ['', RangeError, /name must not be empty/],
    [42, TypeError, /name must be a string/],
    [undefined, TypeError, /name must be a string/],
    ['x'.repeat(2000), RangeError, /name must be at most/],
  ])('rejects name %p', (value, type, message) => {
    expect(() => locks.getLock(value as never)).toThrow(type);
    expect(() => locks.getLock(value as never)).toThrow(message);
  });
});

describe('lock and tryLock arguments', () => {
  const cases: [string, (l: ReturnType<LockClient['getLock']>) => Promise<unknown>, ErrorConstructor, RegExp][] = [
    ['lock(-1)', (l) => l.lock(-1), RangeError, /leaseTime must be at least 100/],
    ['lock(50)', (l) => l.lock(50), RangeError, /leaseTime must be at least 100/],
    ['lock(NaN)', (l) => l.lock(Number.NaN), TypeError, /leaseTime must be a finite number/],
    ['lock(Infinity)', (l) => l.lock(Infinity), TypeError, /leaseTime/],
    ['lock(1e20)', (l) => l.lock(1e20), RangeError, /leaseTime must be at most 2147483647/],
    ['tryLock(0, 2 ** 31)', (l) => l.tryLock(0, 2 ** 31), RangeError, /leaseTime must be at most/],
    ['tryLock(2 ** 31)', (l) => l.tryLock(2 ** 31), RangeError, /waitTime must be at most/],
    ["lock('100')", (l) => l.lock('100' as never), TypeError, /lock\(\) takes a lease/],
    ['lock({ leaseTime: 10 })', (l) => l.lock({ leaseTime: 10 }), RangeError, /leaseTime/],
    ['lock({ lease: 1000 })', (l) => l.lock({ lease: 1000 } as never), TypeError, /unknown option 'lease'/],
    ['lock({ signal: "x" })', (l) => l.lock({ signal: 'x' as never }), TypeError, /signal must be an AbortSignal/],
    ['tryLock(-1)', (l) => l.tryLock(-1), RangeError, /waitTime must be at least 0/],
    ['tryLock(NaN)', (l) => l.tryLock(Number.NaN), TypeError, /waitTime must be a finite number/],
    ['tryLock(100, 50)', (l) => l.tryLock(100, 50), RangeError, /leaseTime must be at least 100/],
    ['tryLock({ waitTime: -5 })', (l) => l.tryLock({ waitTime: -5 }), RangeError, /waitTime/],
    ['tryLock({}, 5)', (l) => l.tryLock({} as never, 5), TypeError, /no second argument/],
    ["run('fn')", (l) => l.run('fn' as never), TypeError, /run\(fn\): fn must be a function/],
    ['run(fn, { waitTime: -1 })', (l) => l.run(async () => 1, { waitTime: -1 }), RangeError, /waitTime/],
    ['run(fn, 5)', (l) => l.run(async () => 1, 5 as never), TypeError, /run\(\) options must be an object/],
    ['acquire({ leaseTime: 0 })', (l) => l.acquire({ leaseTime: 0 }), RangeError, /leaseTime/],
  ];
  it.each(cases)('%s', async (_, call, type, message) => {
    const lock = locks.getLock('valid');
    const promise = call(lock);
    await expect(promise).rejects.toThrow(type);
    await expect(call(lock)).rejects.toThrow(message);
  });

  it('rejects scope() without a function', () => {
    expect(() => locks.scope('x' as never)).toThrow(TypeError);
  });
});
