import {
  CommandTimeoutError,
  LockError,
  LockLostError,
  LockNotHeldError,
  LockTimeoutError,
  LockUnavailableError,
  QuorumError,
  type LockErrorCode,
} from '../../lib';

// The error contract: each class has a stable code and its own name, and sits in the
// documented chain, so callers can match on `instanceof` or on `code`. (That instanceof
// also holds across the ESM and CommonJS entry points is checked on the packed package
// in package.spec.ts.)

const cause = new Error('connect ECONNREFUSED');
const cases: [LockError, LockErrorCode, (new (...args: never[]) => LockError)[]][] = [
  [new LockError('boom'), 'HOLDFAST_LOCK_ERROR', [LockError]],
  [new LockNotHeldError('a'), 'HOLDFAST_NOT_HELD', [LockNotHeldError, LockError]],
  [new LockLostError('a', 'o', 'expired'), 'HOLDFAST_LOCK_LOST', [LockLostError, LockError]],
  [new LockTimeoutError('a', 250), 'HOLDFAST_WAIT_TIMEOUT', [LockTimeoutError, LockError]],
  [new LockUnavailableError('a', 'no answer', { cause }), 'HOLDFAST_UNAVAILABLE', [LockUnavailableError, LockError]],
  [new QuorumError('a', 'acquire', 2, []), 'HOLDFAST_NO_QUORUM', [QuorumError, LockUnavailableError, LockError]],
  [new CommandTimeoutError('EVALSHA', 100, 'a'), 'HOLDFAST_COMMAND_TIMEOUT', [CommandTimeoutError, LockError]],
];

it.each(cases)('%p has code %s, its class name, and its parents', (error, code, chain) => {
  expect(error.code).toBe(code);
  expect(error.name).toBe(chain[0].name);
  for (const parent of chain) expect(error).toBeInstanceOf(parent);
  expect(error).toBeInstanceOf(Error);
  expect(String(error)).toMatch(new RegExp(`^${chain[0].name}: `));
});

it('gives every class its own code', () => {
  const codes = cases.map(([, code]) => code);
  expect(new Set(codes).size).toBe(codes.length);
});

it('keeps code an own property (as Node does for its errors), typed readonly', () => {
  const error = new LockTimeoutError('a', 1);
  expect(Object.keys(error)).toContain('code');
  // @ts-expect-error code is readonly
  error.code = 'HOLDFAST_LOCK_ERROR';
});

it('does not put sibling classes in each other’s chains', () => {
  expect(new LockTimeoutError('a', 1)).not.toBeInstanceOf(LockUnavailableError);
  expect(new LockUnavailableError('a', 'x')).not.toBeInstanceOf(QuorumError);
  expect(new CommandTimeoutError('GET', 1)).not.toBeInstanceOf(LockUnavailableError);
});

it('LockTimeoutError names the lock and the wait that ran out', () => {
  const error = new LockTimeoutError('order:42', 5_000);
  expect(error.message).toMatch(/could not acquire 'order:42' within 5000 ms/);
  expect(error.waitTime).toBe(5_000);
  expect(error.lockName).toBe('order:42');
});

it('LockUnavailableError keeps its message, lock name and cause', () => {
  const error = new LockUnavailableError('order:42', 'Redis did not answer', { cause });
  expect(error.message).toBe('Redis did not answer');
  expect(error.lockName).toBe('order:42');
  expect(error.cause).toBe(cause);
  expect('cause' in new LockUnavailableError('a', 'x')).toBe(false);
});

it('QuorumError keeps votes and quorum, and takes the first failing master as its cause', () => {
  const late = new CommandTimeoutError('EVALSHA', 100, 'a');
  const error = new QuorumError('a', 'acquire', 2, [
    { master: 0, outcome: 'held', pttl: 900 },
    { master: 1, outcome: 'error', error: cause },
    { master: 2, outcome: 'error', error: late },
  ]);
  expect(error.quorum).toBe(2);
  expect(error.votes.map((v) => v.outcome)).toEqual(['held', 'error', 'error']);
  expect(error.cause).toBe(cause);
  expect(error.lockName).toBe('a');
  expect(error.message).toMatch(/cannot acquire 'a': 2 of 3 masters needed; #0 held by another owner \(pttl 900 ms\), #1 error \(connect ECONNREFUSED\), #2 error/);
  expect('cause' in new QuorumError('a', 'acquire', 2, [{ master: 0, outcome: 'held', pttl: 1 }])).toBe(false);
});

it('CommandTimeoutError keeps its signature', () => {
  expect(new CommandTimeoutError('PING', 99.2).message).toBe('PING got no reply within 100 ms');
  expect(new CommandTimeoutError('EVALSHA', 100, 'a').lockName).toBe('a');
});
