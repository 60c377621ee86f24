import { Hold, type HoldListener } from '../../lib/engine/hold';
import { LockLostError } from '../../lib/errors/LockLostError';
import { reentrantLock } from '../../lib/primitives/lock/plain';
import type { Store } from '../../lib/store/types';

// A hold's states and transitions, without Redis: each event fires exactly once, final
// states stay final, and a lost hold answers its outstanding unlocks.

const keys = { name: 'n', key: 'k', id: 'k', fence: 'f', channel: 'c', wakeChannel: 'fc' };
const plainLock = reentrantLock({} as Store, undefined, 1_000, 'lock');

function make(): { hold: Hold; calls: string[] } {
  const calls: string[] = [];
  const listener: HoldListener = {
    lost: (h, e) => calls.push(`lost:${e.reason}`),
    released: () => calls.push('released'),
    ended: (h) => calls.push(`ended:${h.state}`),
  };
  return { hold: new Hold(keys, 'owner', 7, 1_000, true, 500, plainLock, listener), calls };
}

it('starts held at one level, reenters and drops levels', () => {
  const { hold, calls } = make();
  expect([hold.state, hold.count, hold.joinable, hold.live]).toEqual(['held', 1, true, true]);
  hold.reenter(900);
  hold.reenter(800); // a shorter deadline never moves it back
  expect([hold.count, hold.validUntil]).toEqual([3, 900]);
  hold.drop();
  expect(hold.count).toBe(2);
  expect(calls).toEqual([]);
  expect(() => {
    hold.drop();
    hold.drop();
  }).toThrow(/last level/);
});

it('held(1) -> releasing -> released: one released event, ended first', () => {
  const { hold, calls } = make();
  hold.beginRelease();
  expect([hold.state, hold.joinable, hold.live, hold.levelsHeld]).toEqual(['releasing', false, true, 1]);
  expect(() => hold.reenter(1_000)).toThrow(/releasing/);
  hold.finishRelease();
  hold.finishRelease();
  hold.abandon();
  hold.lose('taken');
  expect(hold.state).toBe('released');
  expect(calls).toEqual(['ended:released', 'released']);
  expect(hold.levelsHeld).toBe(0);
});

it('releasing -> abandoned (a failed last unlock): no event but ended', () => {
  const { hold, calls } = make();
  hold.beginRelease();
  hold.abandon();
  hold.finishRelease();
  expect(hold.state).toBe('abandoned');
  expect(calls).toEqual(['ended:abandoned']);
});

it.each(['held', 'releasing'] as const)('%s -> lost: one lost event, the signal aborts with the loss', (from) => {
  const { hold, calls } = make();
  const signal = hold.signal;
  if (from === 'releasing') hold.beginRelease();
  const error = hold.lose('deleted');
  expect(error).toBeInstanceOf(LockLostError);
  expect(hold.lose('taken')).toBe(error); // the first loss stands
  hold.finishRelease();
  expect(hold.state).toBe('lost');
  expect(calls).toEqual(['ended:lost', 'lost:deleted']);
  expect(signal.aborted).toBe(true);
  expect(signal.reason).toBe(error);
  expect(hold.lost).toBe(error);
});

it('a lost hold keeps its levels for the unlocks still to come, and a signal asked for late is aborted', () => {
  const { hold } = make();
  hold.reenter(600);
  hold.lose('expired');
  expect(hold.levelsHeld).toBe(0);
  expect(hold.signal.aborted).toBe(true);
  expect(hold.unwind()).toBe(false);
  expect(hold.unwind()).toBe(true);
});
