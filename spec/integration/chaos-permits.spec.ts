/**
 * The chaos checker's semaphore invariant (spec/kit/chaos/permits.ts) on hand-made
 * histories: it must be able to fail.
 */
import { buildHolds, checkHistory, type Fault, type Hold, type LogRecord } from '../kit/chaos/history';
import { checkPermits } from '../kit/chaos/permits';

const LEASE = 800;
const limits = { sem: 3 };
let seq = 0;

function section(p: Partial<Hold> & Pick<Hold, 'start' | 'permits'>): Hold {
  const id = `s${++seq}`;
  return { id, worker: seq, pid: 100 + seq, lock: 'sem', token: 0, end: p.start + 100, outcome: 'released', writes: [p.start], ...p };
}

const check = (holds: Hold[], faults: Fault[] = []) => checkPermits(holds, faults, { lease: LEASE, limits });

it('accepts sections that stay within the limit, and reports the most held at once', () => {
  const r = check([section({ start: 1_000, permits: 2 }), section({ start: 1_050, permits: 1 }), section({ start: 1_100, permits: 2 })]);
  expect(r.violations).toEqual([]);
  expect(r.maxHeld).toBe(3);
  expect(r.sectionsChecked).toBe(3);
});

it('catches more permits held at once than the limit', () => {
  const r = check([section({ start: 1_000, permits: 2 }), section({ start: 1_050, permits: 2 })]);
  expect(r.violations.map((v) => v.kind)).toEqual(['overlap']);
  expect(r.violations[0]!.message).toMatch(/4 permits of 3 held at 1050/);
});

it('stops counting a section once its holder was told of the loss, not before', () => {
  const first = section({ start: 1_000, permits: 2, end: 1_300, lostAt: 1_040, outcome: 'lost' });
  expect(check([first, section({ start: 1_050, permits: 2 })]).violations).toEqual([]);
  expect(check([{ ...first, lostAt: 1_060 }, section({ start: 1_050, permits: 2 })]).violations).toHaveLength(1);
});

it('excuses an empty restart only when the holder learned of the loss (or was killed)', () => {
  const restart: Fault = { kind: 'restart', begin: 1_020, end: 1_030 };
  const unaware = section({ start: 1_000, permits: 2, end: 1_300 });
  expect(check([unaware, section({ start: 1_050, permits: 2 })], [restart]).violations).toHaveLength(1);
  const r = check([{ ...unaware, lostAt: 1_200, outcome: 'lost' }, section({ start: 1_050, permits: 2 })], [restart]);
  expect(r.violations).toEqual([]);
  expect(r.excused.dataLoss).toBe(1);
});

it("keeps semaphore sections out of the lock checks (tokens 0, overlaps up to the limit), and still finds one that never ended", () => {
  const records: LogRecord[] = [
    { type: 'acq', id: 'a', worker: 0, pid: 1, task: 0, lock: 'sem', token: 0, start: 1_000, permits: 1 },
    { type: 'acq', id: 'b', worker: 1, pid: 2, task: 0, lock: 'sem', token: 0, start: 1_010, permits: 2 },
    { type: 'rel', id: 'a', at: 1_100, outcome: 'released' },
  ];
  const holds = buildHolds(records, []);
  expect(holds.map((h) => h.permits)).toEqual([1, 2]);
  expect(checkHistory(holds, [], { lease: LEASE }).violations.map((v) => v.kind)).toEqual(['dangling']);
});
