/**
 * Entry of a forked child (workers16, procs4, watchdog): answers the orchestrator's
 * requests one at a time, in order, and exits when the IPC channel closes.
 */
import { BASELINE_ARG } from './children';
import { installCommandCounter } from './counters';
import { buildRegistry } from './impls/registry';
import type { BaselineCheckout } from './impls/types';
import { isRequest, type Reply, type Request, type ReplyBodies, type RequestType } from './ipc';
import { countUnhandledRejections, dedupeWarnings, errorStack, setLogPrefix, unhandledRejections, warningCount } from './log';
import { ProcessWorker } from './scenarios/procs4-child';
import { watchdogInChild } from './scenarios/watchdog-child';
import { contendedInChild } from './scenarios/workers16-child';

function baselineFromArgv(): BaselineCheckout | undefined {
  const arg = process.argv.find((a) => a.startsWith(BASELINE_ARG));
  if (!arg) return undefined;
  const b: unknown = JSON.parse(arg.slice(BASELINE_ARG.length));
  const o = b as Partial<BaselineCheckout> | null;
  if (typeof o?.ref !== 'string' || typeof o.commit !== 'string' || typeof o.dir !== 'string') throw new Error(`bad ${BASELINE_ARG} argument`);
  return { ref: o.ref, commit: o.commit, dir: o.dir };
}

setLogPrefix(`child ${process.pid}: `);
installCommandCounter();
process.on('disconnect', () => process.exit(0));
countUnhandledRejections();
dedupeWarnings();

const registry = buildRegistry(baselineFromArgv());
const procWorker = new ProcessWorker(registry);

async function handle(m: Request): Promise<ReplyBodies[RequestType]> {
  switch (m.type) {
    case 'open':
      return procWorker.open(m);
    case 'go':
      return procWorker.go(m);
    case 'close':
      return procWorker.close();
    case 'contended':
      return contendedInChild(registry, m);
    case 'watchdog':
      return watchdogInChild(registry, m);
  }
}

function send(reply: Reply): void {
  process.send!(reply);
}

let queue = Promise.resolve();
process.on('message', (m: unknown) => {
  queue = queue.then(async () => {
    const counts = () => ({ unhandled: unhandledRejections(), warnings: warningCount() });
    if (!isRequest(m)) {
      const id = typeof (m as { id?: unknown } | null)?.id === 'number' ? (m as { id: number }).id : -1;
      send({ id, ok: false, error: `malformed request ${JSON.stringify(m).slice(0, 200)}`, ...counts() });
      return;
    }
    try {
      const body = await handle(m);
      send({ id: m.id, ok: true, body, ...counts() });
    } catch (e) {
      send({ id: m.id, ok: false, error: errorStack(e), ...counts() });
    }
  });
});
