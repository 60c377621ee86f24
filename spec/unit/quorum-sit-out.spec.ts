import { QuorumAcquisition } from '../../lib/store/quorum/acquisition';
import { RestartWatch, SitOut } from '../../lib/store/quorum/restarts';
import { QuorumError } from '../../lib/errors/QuorumError';
import type { MasterStore } from '../../lib/store/master/master';
import type { RedisClientPort } from '../../lib/store/client/redis-client';
import type { LockKeys } from '../../lib/store/types';

// A quorum's acquisition while masters check whether they restarted (a reconnect, or
// GLIDE's probe of every connection when one drops): it waits for the check, without
// Redis (fake connections answer INFO when the spec says).

const SIT_OUT = 30_000;
const keys: LockKeys = { name: 'n', key: 'holdfast:{n}', id: 'holdfast:{n}', fence: 'holdfast:{n}:fence', channel: 'holdfast:{n}:ch', wakeChannel: 'holdfast:{n}:next' };
const info = (runId: string, uptime: number) => `# Server\r\nrun_id:${runId}\r\nuptime_in_seconds:${uptime}\r\n`;

/** One master: a connection whose INFO answers when told, and acquire calls counted. */
function master() {
  const answers: ((text: string) => void)[] = [];
  const readies: (() => void)[] = [];
  const connection = {
    ready: true,
    onReady: (listener: () => void) => (readies.push(listener), () => undefined),
    info: () => new Promise<string>((resolve) => answers.push(resolve)),
  } as unknown as RedisClientPort;
  const restarts = new RestartWatch(connection, SIT_OUT, 'holdfast:met:c');
  const acquire = jest.fn(async () => ({ granted: true as const, token: 7 }));
  const release = jest.fn(async () => 2);
  const store = { down: false, epoch: 0, restarts, acquire, release, levels: { levelsOf: () => 0 }, fenceFloor: async () => undefined };
  return {
    store: store as unknown as MasterStore,
    acquire,
    release,
    /** Answers the INFO out: a server up for a day, or (restarted) one second. */
    answer: (runId: string, uptime = 86_400) => answers.shift()!(info(runId, uptime)),
    /** The connection came back ('ready'): the watch asks INFO again. */
    reconnect: () => readies.forEach((l) => l()),
  };
}

async function quorumOf(n: number) {
  const masters = Array.from({ length: n }, master);
  masters.forEach((m) => m.answer('first'));
  await Promise.all(masters.map((m) => (m.store.restarts as RestartWatch).known));
  const quorum = Math.floor(n / 2) + 1;
  const sitOut = new SitOut(
    masters.map((m) => m.store),
    SIT_OUT,
    quorum,
  );
  const acquisition = new QuorumAcquisition(masters.map((m) => m.store), quorum, sitOut, () => 0, new Map(), (e) => {
    throw e;
  });
  return { masters, acquisition };
}

it('a master checking whether it restarted votes once its INFO answers: the same server grants', async () => {
  const { masters, acquisition } = await quorumOf(3);
  masters[0].reconnect();
  masters[1].reconnect();
  const attempt = acquisition.attempt(keys, 'h:1:c:1', 1_000, 1_000, 0);
  // Asked only once the check says it is the same server.
  await Promise.resolve();
  expect(masters[0].acquire).not.toHaveBeenCalled();
  masters[0].answer('first');
  masters[1].answer('first');
  await expect(attempt).resolves.toMatchObject({ granted: true, token: 7 });
  expect(masters.map((m) => m.acquire.mock.calls.length)).toEqual([1, 1, 1]);
});

it('a master whose check finds a new server sits out, and is never asked', async () => {
  const { masters, acquisition } = await quorumOf(3);
  masters[0].reconnect();
  masters[1].reconnect();
  const attempt = acquisition.attempt(keys, 'h:1:c:1', 1_000, 1_000, 0);
  masters[0].answer('second', 1);
  masters[1].answer('second', 1);
  await expect(attempt).rejects.toBeInstanceOf(QuorumError);
  expect(masters.map((m) => m.acquire.mock.calls.length)).toEqual([0, 0, 1]);
  // The one grant of the failed attempt was given back before it settled.
  expect(masters[2].release).toHaveBeenCalledTimes(1);
});

it('a check that does not answer within the command bound counts the master out', async () => {
  jest.useFakeTimers();
  try {
    const { masters, acquisition } = await quorumOf(3);
    masters[0].reconnect();
    masters[1].reconnect();
    const attempt = acquisition.attempt(keys, 'h:1:c:1', 1_000, 1_000, 0);
    const settled = expect(attempt).rejects.toBeInstanceOf(QuorumError);
    await jest.advanceTimersByTimeAsync(1_000);
    await settled;
    expect(masters.map((m) => m.acquire.mock.calls.length)).toEqual([0, 0, 1]);
  } finally {
    jest.useRealTimers();
  }
});
