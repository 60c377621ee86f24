import diagnostics from 'node:diagnostics_channel';
import { context, metrics, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import Redis from 'ioredis';
import { LockClient, LockTimeoutError, LockUnavailableError, type ClientOptions } from '../../lib';
import { instrument } from '../../lib/otel';
import { observeLocks } from '../../examples/observability';
import { startServer, type RedisServer } from '../kit/servers';
import { TcpProxy } from '../kit/proxy';
import { nextEvent, waitFor, warmUp } from '../helpers/wait';

// holdfast/otel against the real OpenTelemetry SDK (a metric reader collected on
// demand, the in-memory span exporter) and a real redis-server.

const KIND = 'holdfast.lock.kind';
const NAME = 'holdfast.lock.name';
const OUTCOME = 'holdfast.lock.outcome';

/** A reader the spec collects from when it wants to look. */
class CollectingReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** Counts the wait spans begun: a wait has blocked once its span starts. */
class StartedWaits implements SpanProcessor {
  count = 0;
  onStart(span: Span): void {
    if (span.name === 'holdfast.wait') this.count += 1;
  }
  onEnd(): void {}
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

interface Telemetry {
  reader: CollectingReader;
  started: StartedWaits;
  meterProvider: MeterProvider;
  exporter: InMemorySpanExporter;
  tracerProvider: BasicTracerProvider;
}

let server: RedisServer;
let redis: Redis;
let t: Telemetry;
const clients: LockClient[] = [];
const connections: Redis[] = [];
const proxies: TcpProxy[] = [];
let n = 0;
const name = () => `otel-${++n}`;

function client(options: ClientOptions = {}, connection: Redis = redis): LockClient {
  const c = new LockClient(connection, options);
  clients.push(c);
  return c;
}

/** A client whose connection goes through a proxy the spec can break. */
async function clientThroughProxy(options: ClientOptions): Promise<{ locks: LockClient; proxy: TcpProxy }> {
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
  proxies.push(proxy);
  const connection = new Redis({ port: proxy.port, host: '127.0.0.1' });
  connection.on('error', () => undefined);
  connections.push(connection);
  return { locks: client(options, connection), proxy };
}

async function collect(name: string): Promise<DataPoint<unknown>[]> {
  const { resourceMetrics, errors } = await t.reader.collect();
  expect(errors).toEqual([]);
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) if (metric.descriptor.name === name) return metric.dataPoints as DataPoint<unknown>[];
  }
  return [];
}

/** The value of a sum (counter, up-down counter) for exactly these attributes; 0 when never recorded. */
async function sum(metric: string, attributes: Attributes): Promise<number> {
  const point = (await collect(metric)).find((p) => sameAttributes(p.attributes, attributes));
  return (point?.value as number | undefined) ?? 0;
}

async function histogram(attributes: Attributes): Promise<Histogram | undefined> {
  const point = (await collect('holdfast.lock.wait.duration')).find((p) => sameAttributes(p.attributes, attributes));
  return point?.value as Histogram | undefined;
}

function sameAttributes(a: Attributes, b: Attributes): boolean {
  return JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
}

const waitSpans = (): ReadableSpan[] => t.exporter.getFinishedSpans().filter((s) => s.name === 'holdfast.wait');
const ms = ([s, ns]: [number, number]) => s * 1_000 + ns / 1e6;

/** Until the lock's waiters in `locks` block: they are subscribed to the queue's channel. */
async function blocked(lockName: string, subscribers = 1, suffix = 'next'): Promise<void> {
  const channel = `holdfast:{${lockName}}:${suffix}`;
  await waitFor(async () => ((await redis.pubsub('NUMSUB', channel)) as [string, number])[1] >= subscribers, { message: `a waiter subscribed to ${channel}` });
}

beforeAll(async () => {
  server = await startServer();
  redis = new Redis(server.port, '127.0.0.1');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(async () => {
  context.disable();
  redis.disconnect();
  await server.stop();
});
beforeEach(() => {
  const reader = new CollectingReader();
  const exporter = new InMemorySpanExporter();
  const started = new StartedWaits();
  t = {
    reader,
    started,
    meterProvider: new MeterProvider({ readers: [reader] }),
    exporter,
    tracerProvider: new BasicTracerProvider({ spanProcessors: [started, new SimpleSpanProcessor(exporter)] }),
  };
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const c of connections.splice(0)) c.disconnect();
  await Promise.all(proxies.splice(0).map((p) => p.close()));
  await t.meterProvider.shutdown();
  await t.tracerProvider.shutdown();
});

const providers = () => ({ meterProvider: t.meterProvider, tracerProvider: t.tracerProvider });

describe('a wait that blocked', () => {
  it('records a wait.duration point and a holdfast.wait span, child of the caller\'s span', async () => {
    const locks = client();
    const holder = client();
    instrument(locks, providers());
    const lockName = name();
    const held = await holder.getLock(lockName).acquire();
    const caller = t.tracerProvider.getTracer('spec');
    let parentId = '';
    const waiting = caller.startActiveSpan('handle request', async (parent) => {
      parentId = parent.spanContext().spanId;
      try {
        return await locks.getLock(lockName).run(async () => 'done', { waitTime: 10_000 });
      } finally {
        parent.end();
      }
    });
    await blocked(lockName);
    const releasedAt = performance.now();
    await held.release();
    expect(await waiting).toBe('done');

    const spans = waitSpans();
    expect(spans).toHaveLength(1);
    const [span] = spans;
    expect(span.attributes).toEqual({ [KIND]: 'lock', [OUTCOME]: 'acquired' });
    expect(span.parentSpanContext?.spanId).toBe(parentId);
    expect(span.status.code).toBe(0); // UNSET
    expect(ms(span.duration)).toBeGreaterThan(0);
    expect(ms(span.endTime)).toBeGreaterThanOrEqual(performance.timeOrigin + releasedAt - 1);

    const point = await histogram({ [KIND]: 'lock', [OUTCOME]: 'acquired' });
    expect(point?.count).toBe(1); // the holder's client is not instrumented
    expect(point!.sum).toBeGreaterThan(0);
    expect(point!.sum).toBeLessThan(10); // seconds, not milliseconds
    expect(point!.buckets.boundaries[0]).toBe(0.001);
  });

  it('records no span for an acquisition that did not block, plain or fair', async () => {
    const locks = client();
    instrument(locks, providers());
    await locks.getLock(name()).run(async () => undefined);
    await locks.getFairLock(name()).run(async () => undefined, { waitTime: 1_000 });
    expect(waitSpans()).toEqual([]);
    expect((await histogram({ [KIND]: 'lock', [OUTCOME]: 'acquired' }))?.count).toBe(1);
    expect((await histogram({ [KIND]: 'fair', [OUTCOME]: 'acquired' }))?.count).toBe(1);
  });

  it('ends the span of a fair wait that blocked, with kind fair', async () => {
    const locks = client();
    const holder = client();
    instrument(locks, providers());
    const lockName = name();
    const held = await holder.getFairLock(lockName).acquire();
    const waiting = locks.getFairLock(lockName).run(async () => 'done', { waitTime: 10_000 });
    // A fair waiter subscribes to the queue's wake-ups once its first attempt was refused.
    await blocked(lockName, 1, 'next');
    await held.release();
    expect(await waiting).toBe('done');
    expect(waitSpans().map((s) => s.attributes)).toEqual([{ [KIND]: 'fair', [OUTCOME]: 'acquired' }]);
  });

  it('ends the span with outcome timeout, aborted or unavailable when the wait gets nothing', async () => {
    const locks = client();
    const holder = client();
    instrument(locks, providers());
    const lockName = name();
    const held = await holder.getLock(lockName).acquire();
    const lock = locks.getLock(lockName);

    expect(await lock.tryLock(200)).toBe(false);
    await expect(lock.run(async () => undefined, { waitTime: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    const controller = new AbortController();
    const aborted = lock.run(async () => undefined, { signal: controller.signal });
    // Its own span begun (the channel's subscription may still be the earlier waits'):
    // an abort before the wait blocks would end it without one.
    await waitFor(() => t.started.count === 3, { message: 'the third wait blocked' });
    controller.abort(new Error('caller gave up'));
    await expect(aborted).rejects.toThrow('caller gave up');
    await held.release();

    const { locks: cut, proxy } = await clientThroughProxy({ commandTimeout: 100 });
    instrument(cut, providers());
    await warmUp(() => cut.getLock(name()).run(async () => undefined)); // connected
    proxy.blackhole();
    const unavailable = cut.getLock(name()).run(async () => undefined, { waitTime: 500 });
    await expect(unavailable).rejects.toBeInstanceOf(LockUnavailableError);

    const outcomes = waitSpans().map((s) => s.attributes[OUTCOME]);
    expect(outcomes).toEqual(['timeout', 'timeout', 'aborted', 'unavailable']);
    const failed = waitSpans()[3];
    expect(failed.status.code).toBe(2); // ERROR
    expect(failed.events.map((e) => e.name)).toEqual(['exception']);
    for (const span of waitSpans().slice(0, 3)) expect(span.status.code).toBe(0);
    expect((await histogram({ [KIND]: 'lock', [OUTCOME]: 'timeout' }))?.count).toBe(2);
    expect((await histogram({ [KIND]: 'lock', [OUTCOME]: 'aborted' }))?.count).toBe(1);
    expect((await histogram({ [KIND]: 'lock', [OUTCOME]: 'unavailable' }))?.count).toBe(1);
    expect(await sum('holdfast.lock.acquire.failures', { [KIND]: 'lock' })).toBeGreaterThanOrEqual(1);
  });
});

describe('holds', () => {
  it('counts holdfast.lock.held up and down, per kind, reentries once', async () => {
    const locks = client();
    instrument(locks, providers());
    const plain = locks.getLock(name());
    const fair = locks.getFairLock(name());
    await locks.scope(async () => {
      await plain.lock();
      await plain.lock(); // a reentry: still one hold
      await fair.lock();
      expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(1);
      expect(await sum('holdfast.lock.held', { [KIND]: 'fair' })).toBe(1);
      await plain.unlock();
      expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(1);
      await plain.unlock();
      await fair.unlock();
    });
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(0);
    expect(await sum('holdfast.lock.held', { [KIND]: 'fair' })).toBe(0);
  });

  it('takes a hold out of held when its last unlock fails (no released event) and when it is lost', async () => {
    const { locks, proxy } = await clientThroughProxy({ commandTimeout: 100 });
    instrument(locks, providers());
    const held = await locks.getLock(name()).acquire({ leaseTime: 5_000 });
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(1);
    proxy.blackhole();
    await expect(held.release()).rejects.toThrow();
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(0);

    const other = client();
    instrument(other, providers());
    const lock = other.getLock(name());
    await lock.lock();
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(1);
    await lock.forceUnlock();
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(0);
    expect(await sum('holdfast.lock.lost', { [KIND]: 'lock', 'holdfast.lock.lost.reason': 'deleted' })).toBe(1);
    await expect(lock.unlock()).rejects.toThrow(/lost/);
  });

  it('counts renewal failures and the loss they end in', async () => {
    const { locks, proxy } = await clientThroughProxy({ watchdogTimeout: 600 });
    instrument(locks, providers());
    const lock = locks.getLock(name());
    await lock.lock();
    await nextEvent(lock, 'renewed', 1_000);
    proxy.blackhole();
    await nextEvent(lock, 'lost', 2_000);
    expect(await sum('holdfast.lock.renewal.failures', { [KIND]: 'lock' })).toBeGreaterThanOrEqual(1);
    expect(await sum('holdfast.lock.lost', { [KIND]: 'lock', 'holdfast.lock.lost.reason': 'expired' })).toBe(1);
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(0);
    await expect(lock.unlock()).rejects.toThrow(/lost/);
  });
});

describe('lock names', () => {
  async function contended(locks: LockClient): Promise<string> {
    const holder = client();
    const lockName = name();
    const held = await holder.getLock(lockName).acquire();
    const waiting = locks.getLock(lockName).run(async () => undefined, { waitTime: 10_000 });
    await blocked(lockName);
    await held.release();
    await waiting;
    return lockName;
  }

  it('are on no metric point and no span by default', async () => {
    const locks = client();
    instrument(locks, providers());
    await contended(locks);
    const lock = locks.getLock(name());
    await lock.lock();
    await lock.forceUnlock();
    await expect(lock.unlock()).rejects.toThrow(/lost/);
    const { resourceMetrics } = await t.reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.flatMap((m) => m.dataPoints.map((p) => p.attributes)));
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (const attributes of [...all, ...waitSpans().map((s) => s.attributes)]) expect(Object.keys(attributes)).not.toContain(NAME);
  });

  it('are on every point and span with names: true', async () => {
    const locks = client();
    instrument(locks, { ...providers(), names: true });
    const lockName = await contended(locks);
    expect(waitSpans().map((s) => s.attributes)).toEqual([{ [KIND]: 'lock', [NAME]: lockName, [OUTCOME]: 'acquired' }]);
    expect((await histogram({ [KIND]: 'lock', [NAME]: lockName, [OUTCOME]: 'acquired' }))?.count).toBe(1);
    const held = await locks.getLock(lockName).acquire();
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock', [NAME]: lockName })).toBe(1);
    await held.release();
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock', [NAME]: lockName })).toBe(0);
  });
});

describe('instrument()', () => {
  it('stop() removes every listener it added and takes its holds back out of held', async () => {
    const locks = client();
    const stop = instrument(locks, providers());
    expect(locks.eventNames().sort()).toEqual(['acquireFailed', 'acquired', 'lost', 'renewalFailed']);
    const lock = locks.getLock(name());
    const held = await lock.acquire();
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(1);
    stop();
    expect(locks.eventNames()).toEqual([]);
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(0);
    await held.release();
    expect(await sum('holdfast.lock.held', { [KIND]: 'lock' })).toBe(0);

    // Nothing more is recorded: no span for a wait that blocks, no point for its acquisition.
    const holder = client();
    const held2 = await holder.getLock(lock.name).acquire();
    const waiting = lock.run(async () => undefined, { waitTime: 10_000 });
    await blocked(lock.name);
    await held2.release();
    await waiting;
    expect(waitSpans()).toEqual([]);
    expect((await histogram({ [KIND]: 'lock', [OUTCOME]: 'acquired' }))?.count).toBe(1);
    expect(() => stop()).not.toThrow();
  });

  it("uses the global providers by default (the README's observeLocks example)", async () => {
    metrics.setGlobalMeterProvider(t.meterProvider);
    trace.setGlobalTracerProvider(t.tracerProvider);
    try {
      const locks = client();
      const logged: unknown[] = [];
      const stop = observeLocks(locks, { error: (fields, msg) => logged.push({ fields, msg }) });
      await locks.getLock(name()).run(async () => undefined);
      expect((await histogram({ [KIND]: 'lock', [OUTCOME]: 'acquired' }))?.count).toBe(1);
      const lock = locks.getLock(name());
      await lock.lock();
      await lock.forceUnlock();
      await expect(lock.unlock()).rejects.toThrow(/lost/);
      expect(logged).toEqual([{ fields: { lock: lock.name, kind: 'lock', reason: 'deleted' }, msg: 'lock lost' }]);
      expect(await sum('holdfast.lock.lost', { [KIND]: 'lock', 'holdfast.lock.lost.reason': 'deleted' })).toBe(1);
      stop();
      expect(locks.eventNames()).toEqual([]);
      expect(diagnostics.channel('holdfast:lost').hasSubscribers).toBe(false);
    } finally {
      metrics.disable();
      trace.disable();
    }
  });

  it('rejects what is not a LockClient and bad options with a TypeError naming them', () => {
    const locks = client();
    expect(() => instrument({} as LockClient)).toThrow(new TypeError('instrument(locks, options): locks must be a LockClient, got Object'));
    expect(() => instrument(locks, 'x' as never)).toThrow(/options must be an object, got 'x'/);
    expect(() => instrument(locks, { names: 'yes' } as never)).toThrow(/options\.names must be a boolean/);
    expect(() => instrument(locks, { meterProvider: {} } as never)).toThrow(/options\.meterProvider must be a MeterProvider/);
    expect(() => instrument(locks, { tracerProvider: 1 } as never)).toThrow(/options\.tracerProvider must be a TracerProvider/);
    expect(() => instrument(locks, { name: true } as never)).toThrow(/unknown option 'name'/);
    expect(locks.eventNames()).toEqual([]);
  });
});
