import { tallyRenewal } from '../../lib/store/quorum/renewal-tally';

// The quorum's verdict on one renewed hold, without Redis.

const renewed = { ok: true as const, validUntil: 1 };
const deleted = { ok: false as const, reason: 'deleted' as const };
const taken = { ok: false as const, reason: 'taken' as const };
const timeout = { ok: false as const, error: new Error('timeout') };
const reply = (...o: (typeof renewed | typeof deleted | typeof taken | typeof timeout)[]) => ({ ok: true as const, value: o });
const down = { ok: false as const, error: new Error('down') };

it.each([
  ['a majority renewed', [reply(renewed), reply(renewed), reply(renewed)], { outcome: 'renewed', lostOn: [] }],
  ['a majority renewed, one master lost it', [reply(deleted), reply(renewed), reply(renewed)], { outcome: 'renewed', lostOn: [0] }],
  ['a majority renewed, one taken by another owner: not put back', [reply(taken), reply(renewed), reply(renewed)], { outcome: 'renewed', lostOn: [] }],
  ['a majority no longer has it', [reply(deleted), reply(taken), reply(renewed)], { outcome: 'gone' }],
  ['one renewed, one down, one gone: transient', [reply(renewed), down, reply(deleted)], { outcome: 'failed', error: down.error }],
  ['a timeout on one, one renewed, one down', [reply(timeout), reply(renewed), down], { outcome: 'failed' }],
])('%s', (_, perMaster, expected) => {
  expect(tallyRenewal(perMaster, 0, 2)).toMatchObject(expected);
});

it('reads the item at its index in every master\'s batch', () => {
  const perMaster = [reply(renewed, deleted), reply(renewed, deleted), reply(deleted, renewed)];
  expect(tallyRenewal(perMaster, 0, 2)).toEqual({ outcome: 'renewed', lostOn: [2] });
  expect(tallyRenewal(perMaster, 1, 2)).toEqual({ outcome: 'gone' });
});

it('counts no renewal of a master whose connection broke while the batch was out (it may have restarted empty)', () => {
  // 3 of 5 restarted empty: two renewed just before they died, the third answered the resend.
  const perMaster = [reply(renewed), reply(renewed), reply(deleted), reply(renewed), reply(renewed)];
  expect(tallyRenewal(perMaster, 0, 3)).toEqual({ outcome: 'renewed', lostOn: [2] });
  const tally = tallyRenewal(perMaster, 0, 3, [true, true, true, false, false]);
  expect(tally).toMatchObject({ outcome: 'failed', error: { message: expect.stringMatching(/broke while the renewal batch was out/) } });
  // Its "gone" still counts: the next round, every restarted master says so.
  expect(tallyRenewal([reply(deleted), reply(deleted), reply(deleted), reply(renewed), reply(renewed)], 0, 3, [true, true, true, false, false])).toEqual({ outcome: 'gone' });
});
