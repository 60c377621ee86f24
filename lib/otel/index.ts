// holdfast/otel: OpenTelemetry metrics and spans for a LockClient. A separate entry
// point so that the main one never loads @opentelemetry/api (an optional peer).
export { instrument } from './instrument.js';
export type { InstrumentOptions } from './options.js';
