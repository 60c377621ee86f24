import type { Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import { ValueType } from '@opentelemetry/api';

/** The instruments instrument() records with; names and units are the public contract (README). */
export interface Instruments {
  readonly waitDuration: Histogram;
  readonly held: UpDownCounter;
  readonly lost: Counter;
  readonly renewalFailures: Counter;
  readonly acquireFailures: Counter;
}

/**
 * Bucket boundaries for waits, in seconds: from an uncontended acquisition (a round
 * trip, a millisecond or so) to waits of a minute. The SDK's default boundaries are
 * meant for milliseconds (0 to 10 000) and would put every wait in the first buckets.
 */
const WAIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createInstruments(meter: Meter): Instruments {
  return {
    waitDuration: meter.createHistogram('holdfast.lock.wait.duration', {
      description: 'Time from an acquire call to its hold, or to the end of a wait that blocked and got none (holdfast.lock.outcome)',
      unit: 's',
      valueType: ValueType.DOUBLE,
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    }),
    held: meter.createUpDownCounter('holdfast.lock.held', {
      description: 'Holds this process has now (reentries count once)',
      unit: '{lock}',
      valueType: ValueType.INT,
    }),
    lost: meter.createCounter('holdfast.lock.lost', {
      description: 'Holds lost before their release (holdfast.lock.lost.reason: expired, taken, deleted, quorum)',
      unit: '{lock}',
      valueType: ValueType.INT,
    }),
    renewalFailures: meter.createCounter('holdfast.lock.renewal.failures', {
      description: 'Watchdog renewals that failed; each is retried while the lease lasts',
      unit: '{attempt}',
      valueType: ValueType.INT,
    }),
    acquireFailures: meter.createCounter('holdfast.lock.acquire.failures', {
      description: 'Attempts of a wait that could not reach Redis or a quorum; each is retried until the wait ends',
      unit: '{attempt}',
      valueType: ValueType.INT,
    }),
  };
}
