// The bound every Redis call gets (lib/util/timeout.ts): one sweeper for all calls in
// flight. No Redis here: the calls are promises the spec settles itself.
import { CommandTimeoutError } from '../../lib/errors/CommandTimeoutError';
import { boundThen, withTimeout } from '../../lib/util/timeout';

const never = () => new Promise<number>(() => undefined);

it('rejects every overdue call once and lets every answered one through, with many in flight', async () => {
  const answers: ((value: number) => void)[] = [];
  const answered = Array.from({ length: 40 }, (_, i) =>
    withTimeout(
      new Promise<number>((resolve) => answers.push(resolve)),
      5_000,
      'answered',
    ).then((value) => expect(value).toBe(i)),
  );
  let failures = 0;
  const overdue = Array.from({ length: 40 }, () =>
    boundThen(
      never(),
      20,
      'overdue',
      'a-lock',
      () => 'value',
      (error) => {
        failures += 1;
        return error;
      },
    ),
  );
  // Answers arrive while overdue calls are being swept out around them.
  answers.forEach((answer, i) => setTimeout(() => answer(i), i % 10));
  await Promise.all(answered);
  const errors = await Promise.all(overdue);
  expect(failures).toBe(40);
  for (const error of errors) {
    expect(error).toBeInstanceOf(CommandTimeoutError);
    expect((error as CommandTimeoutError).message).toContain("'a-lock'");
  }
});

it('gives a reply that comes after the bound to nobody: onValue never runs after onError', async () => {
  let answer!: (value: number) => void;
  const calls: string[] = [];
  const bounded = boundThen(
    new Promise<number>((resolve) => (answer = resolve)),
    10,
    'late',
    undefined,
    () => calls.push('value'),
    () => calls.push('error'),
  );
  await bounded;
  answer(1);
  await new Promise((resolve) => setImmediate(resolve));
  expect(calls).toEqual(['error']);
});
