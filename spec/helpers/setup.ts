/**
 * Fails a test during which an unhandled rejection or an uncaught exception
 * happened, naming the reason. For a lock library these are the bugs that
 * matter most (a watchdog or subscriber callback rejecting in the background)
 * and they surface after the code that caused them has returned.
 *
 * Listeners go on the real process object: the `process` a spec sees is a
 * copy whose events Node never emits. They are added in beforeAll (jest-circus
 * replaces the real process's listeners when a file starts) and removed in
 * afterAll, so they do not pile up across the files one worker runs.
 */
import { setImmediate } from 'node:timers/promises';
import { inspect } from 'node:util';
import vm from 'node:vm';

const hostProcess = vm.runInThisContext('process') as NodeJS.Process;

// Jest's sandbox realm lacks the Symbol.dispose/asyncDispose that Node (18.18+) gives
// the main realm; `await using` needs them. Borrow the host's, so both realms agree.
for (const name of ['dispose', 'asyncDispose'] as const) {
  if (!(Symbol as unknown as Record<string, symbol | undefined>)[name]) {
    Object.defineProperty(Symbol, name, { value: vm.runInThisContext(`Symbol.${name}`) });
  }
}

/** Keyed by promise so a rejection handled late (rejectionHandled) is forgiven. */
const rejections = new Map<Promise<unknown>, unknown>();
const exceptions: unknown[] = [];

const onRejection = (reason: unknown, promise: Promise<unknown>): void => {
  rejections.set(promise, reason);
};
const onRejectionHandled = (promise: Promise<unknown>): void => {
  rejections.delete(promise);
};
const onException = (error: unknown): void => {
  exceptions.push(error);
};

function explain(reason: unknown): string {
  if (reason instanceof Error) return reason.stack ?? `${reason.name}: ${reason.message}`;
  return inspect(reason, { depth: 3 });
}

async function assertNoneHappened(when: string): Promise<void> {
  // 'unhandledRejection' is emitted only after the microtask queue drains.
  await setImmediate();
  const found = [
    ...[...rejections.values()].map((r) => `unhandledRejection: ${explain(r)}`),
    ...exceptions.map((e) => `uncaughtException: ${explain(e)}`),
  ];
  rejections.clear();
  exceptions.length = 0;
  if (found.length > 0) {
    throw new Error(`${found.length} unhandled error(s) ${when}:\n\n${found.join('\n\n')}`);
  }
}

beforeAll(() => {
  hostProcess.on('unhandledRejection', onRejection);
  hostProcess.on('rejectionHandled', onRejectionHandled);
  hostProcess.on('uncaughtException', onException);
});

afterEach(() => assertNoneHappened('during this test'));

afterAll(async () => {
  try {
    await assertNoneHappened('after the last test of this file');
  } finally {
    hostProcess.off('unhandledRejection', onRejection);
    hostProcess.off('rejectionHandled', onRejectionHandled);
    hostProcess.off('uncaughtException', onException);
  }
});
