// #region example
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { LockClient, LostEvent } from 'holdfast';
import { instrument } from 'holdfast/otel';

// Metrics and wait spans through OpenTelemetry (here the global providers), and a log
// line per lost lock from its diagnostics channel, whichever client in the process lost it.
export function observeLocks(locks: LockClient, log: { error(fields: object, msg: string): void }): () => void {
  const stop = instrument(locks); // or instrument(locks, { meterProvider, tracerProvider, names: true })
  const onLost = (message: unknown) => {
    const { name, kind, reason } = message as LostEvent;
    log.error({ lock: name, kind, reason }, 'lock lost');
  };
  subscribe('holdfast:lost', onLost);
  return () => {
    stop(); // removes every listener instrument() added
    unsubscribe('holdfast:lost', onLost);
  };
}
// #endregion example
