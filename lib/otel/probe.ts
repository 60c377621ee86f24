import type { Attributes, Tracer } from '@opentelemetry/api';
import { context, SpanStatusCode } from '@opentelemetry/api';
import type { Probe, WaitEnd } from '../engine/event-hub.js';
import type { LockKind } from '../events.js';
import { OUTCOME, type AttributeSets } from './attributes.js';
import type { Instruments } from './metrics.js';

/** performance.now() as epoch milliseconds, the time base OpenTelemetry takes. */
const epoch = (monotonic: number) => performance.timeOrigin + monotonic;

/** A probe that also takes back what it counted, for stop(). */
export interface OtelProbe extends Probe {
  stop(): void;
}

/**
 * What the events do not tell: holdfast.lock.held (holds counted from their start to
 * whatever final state, a failed last unlock included) and one `holdfast.wait` span per
 * wait that blocked, ended with its outcome however it ended.
 */
export function otelProbe(instruments: Instruments, tracer: Tracer, attributes: AttributeSets): OtelProbe {
  /** Holds counted in holdfast.lock.held, with the attributes they were counted under. */
  const counted = new Map<object, Attributes>();
  let stopped = false;
  return {
    holdBegan(hold: object, name: string, kind: LockKind): void {
      const a = attributes.of(kind, name);
      counted.set(hold, a);
      instruments.held.add(1, a);
    },

    // Only holds counted here go down: one taken before instrument() does not make the sum negative.
    holdEnded(hold: object): void {
      const a = counted.get(hold);
      if (a === undefined) return;
      counted.delete(hold);
      instruments.held.add(-1, a);
    },

    waitBlocked(name: string, _owner: string, kind: LockKind, start: number): WaitEnd {
      // Started here, in the caller's async context: the span's parent is the caller's span.
      const startTime = epoch(start);
      const span = tracer.startSpan('holdfast.wait', { startTime, attributes: attributes.of(kind, name) }, context.active());
      return (outcome, error) => {
        const endTime = epoch(performance.now());
        span.setAttribute(OUTCOME, outcome);
        if (outcome === 'unavailable' || outcome === 'failed') {
          if (error instanceof Error) span.recordException(error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        }
        // A span begun before stop() still ends, so that no span is left open.
        span.end(endTime);
        // An acquired wait is recorded from its `acquired` event, like every acquisition.
        if (outcome !== 'acquired' && !stopped) instruments.waitDuration.record((endTime - startTime) / 1000, attributes.of(kind, name, OUTCOME, outcome));
      };
    },

    stop(): void {
      stopped = true;
      // Nothing is left counted in the shared instrument for holds it will not see end.
      for (const a of counted.values()) instruments.held.add(-1, a);
      counted.clear();
    },
  };
}
