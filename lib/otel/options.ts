import type { Meter, MeterProvider, Tracer, TracerProvider } from '@opentelemetry/api';
import { metrics, trace } from '@opentelemetry/api';
import { describe } from '../options.js';

/** Options of instrument(). */
export interface InstrumentOptions {
  /** Where the metrics go. Default: the global MeterProvider of `@opentelemetry/api`. */
  meterProvider?: MeterProvider;
  /** Where the `holdfast.wait` spans go. Default: the global TracerProvider of `@opentelemetry/api`. */
  tracerProvider?: TracerProvider;
  /**
   * Adds the lock's name (`holdfast.lock.name`) to every metric point and span. Off by
   * default: each name becomes its own time series, so names built from ids
   * (`order:${id}`) mean unbounded cardinality in your metrics backend.
   */
  names?: boolean;
}

/** What instrument() works with, its options checked. */
export interface Resolved {
  readonly meter: Meter;
  readonly tracer: Tracer;
  readonly names: boolean;
}

/** The instrumentation scope's name on every metric and span. */
const SCOPE = 'holdfast';
const KEYS = ['meterProvider', 'tracerProvider', 'names'];

/** Checks instrument()'s options (TypeError naming the option) and picks the providers. */
export function resolveOptions(options: unknown): Resolved {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`instrument(locks, options): options must be an object, got ${describe(options)}`);
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KEYS.includes(key)) throw new TypeError(`instrument(locks, options): unknown option '${key}' (expected ${KEYS.join(', ')})`);
  }
  const meterProvider = o.meterProvider ?? metrics.getMeterProvider();
  if (typeof (meterProvider as Partial<MeterProvider>).getMeter !== 'function') {
    throw new TypeError(`instrument(locks, options): options.meterProvider must be a MeterProvider (with getMeter()), got ${describe(o.meterProvider)}`);
  }
  const tracerProvider = o.tracerProvider ?? trace.getTracerProvider();
  if (typeof (tracerProvider as Partial<TracerProvider>).getTracer !== 'function') {
    throw new TypeError(`instrument(locks, options): options.tracerProvider must be a TracerProvider (with getTracer()), got ${describe(o.tracerProvider)}`);
  }
  if (o.names !== undefined && typeof o.names !== 'boolean') {
    throw new TypeError(`instrument(locks, options): options.names must be a boolean, got ${describe(o.names)}`);
  }
  return {
    meter: (meterProvider as MeterProvider).getMeter(SCOPE),
    tracer: (tracerProvider as TracerProvider).getTracer(SCOPE),
    names: o.names ?? false,
  };
}
