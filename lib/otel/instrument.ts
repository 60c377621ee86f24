import type { LockClient } from '../client.js';
import { hubOf } from '../engine/event-hub.js';
import type { AcquiredEvent, AcquireFailedEvent, LostEvent, RenewalFailedEvent } from '../events.js';
import { describe } from '../options.js';
import { AttributeSets, LOST_REASON, OUTCOME } from './attributes.js';
import { createInstruments } from './metrics.js';
import { resolveOptions, type InstrumentOptions } from './options.js';
import { otelProbe } from './probe.js';

/**
 * Records OpenTelemetry metrics and spans for every lock of `locks`:
 * `holdfast.lock.wait.duration` (histogram, s), `holdfast.lock.held` (up-down counter),
 * `holdfast.lock.lost`, `holdfast.lock.renewal.failures`, `holdfast.lock.acquire.failures`
 * (counters), each with `holdfast.lock.kind`, and a `holdfast.wait` span per wait that
 * blocked. Call it before taking locks: holds taken earlier are not counted as held.
 *
 * @returns stop(): removes every listener it added; holds it counted as held are
 *   taken back out of `holdfast.lock.held`. Calling it again does nothing.
 * @throws TypeError when `locks` is not a LockClient or an option is invalid.
 * @example
 * const stop = instrument(locks, { meterProvider, tracerProvider });
 * // ...
 * stop();
 */
export function instrument(locks: LockClient, options?: InstrumentOptions): () => void {
  const hub = typeof locks === 'object' && locks !== null ? hubOf(locks) : undefined;
  if (!hub) throw new TypeError(`instrument(locks, options): locks must be a LockClient, got ${describe(locks)}`);
  const { meter, tracer, names } = resolveOptions(options);
  const instruments = createInstruments(meter);
  const attributes = new AttributeSets(names);

  const onAcquired = (e: AcquiredEvent) => instruments.waitDuration.record(e.waitedMs / 1000, attributes.of(e.kind, e.name, OUTCOME, 'acquired'));
  const onLost = (e: LostEvent) => instruments.lost.add(1, attributes.of(e.kind, e.name, LOST_REASON, e.reason));
  const onRenewalFailed = (e: RenewalFailedEvent) => instruments.renewalFailures.add(1, attributes.of(e.kind, e.name));
  const onAcquireFailed = (e: AcquireFailedEvent) => instruments.acquireFailures.add(1, attributes.of(e.kind, e.name));
  locks.on('acquired', onAcquired);
  locks.on('lost', onLost);
  locks.on('renewalFailed', onRenewalFailed);
  locks.on('acquireFailed', onAcquireFailed);
  const probe = otelProbe(instruments, tracer, attributes);
  const detach = hub.attach(probe);

  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    locks.off('acquired', onAcquired);
    locks.off('lost', onLost);
    locks.off('renewalFailed', onRenewalFailed);
    locks.off('acquireFailed', onAcquireFailed);
    detach();
    probe.stop();
  };
}
