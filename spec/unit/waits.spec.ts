/**
 * The engine's one wait (engine/waits.ts), driven by the real Engine over the in-memory
 * store (helpers/memory-store.ts) under fake timers: hand-offs, give-backs, deadlines,
 * broken subscriptions, close ordering, arrival order (the lock's and the fair lock's)
 * and the 'client' waits of quorum mode. No Redis: the Lua semantics are mirrored in
 * helpers/memory-scripts.ts, and the integration specs (waiting.spec.ts, fair.spec.ts)
 * check the same promises against real servers.
 *
 * Times are fake ms from the start of each test. With HEARTBEAT 3000, a queued waiter
 * that is not woken asks every 1000 ms.
 */
import type { Hold } from '../../lib/engine/hold';
import { CommandTimeoutError } from '../../lib/errors/CommandTimeoutError';
import { LockError } from '../../lib/errors/LockError';
import { LockUnavailableError } from '../../lib/errors/LockUnavailableError';
import { safety } from '../../lib/store/lease-margin';
import { queueKeys } from '../../lib/store/name-keys';
import { HEARTBEAT, keys, LEASE, TestClient, tick, track, type Tracked } from './helpers/harness';
import { MemoryRedis } from './helpers/memory-store';

let redis: MemoryRedis;
let clients: TestClient[];

beforeEach(() => {
  jest.useFakeTimers();
  redis = new MemoryRedis();
  clients = [];
});

afterEach(async () => {
  // Every call of close() is bounded by timers (a slow leave): fake time runs them.
  const closing = Promise.all(clients.map((c) => c.engine.close()));
  await tick(5_000);
  await closing;
  jest.useRealTimers();
  jest.restoreAllMocks();
});

const now = () => performance.now();
const X = keys('x');
const XQ = queueKeys(X.key);
/** A grant's message ('owner wait token'), as opposed to a wake-up (an owner id). */
const isGrant = (_channel: string, message: string) => message.includes(' ');

function client(id: string, options?: { queue?: boolean }): TestClient {
  const c = new TestClient(redis, id, options);
  clients.push(c);
  return c;
}

/** Takes x for `owner` of `c` at once (the lock is free). */
async function take(c: TestClient, owner = 1, primitive = c.lock): Promise<Hold> {
  const taken = c.acquire(primitive, 'x', owner);
  await tick();
  expect(taken.state).toBe('resolved');
  return taken.value!;
}

function held(t: Tracked<Hold | null>): Hold {
  expect(t.state).toBe('resolved');
  expect(t.value).not.toBeNull();
  return t.value!;
}

/** The fencing counter of x: the last token minted for it (above every one before). */
const minted = () => Number(redis.get(X.fence));

/** The owners the lock hash of x holds, in the server. */
const holders = () => redis.hgetall(X.key).map(([owner]) => owner);

describe("waits 'queue': hand-offs", () => {
  it("a release grants the head: the wait takes the grant from its message, with no attempt of its own, counted from its last refusal's send", async () => {
    const a = client('a');
    const b = client('b');
    const first = await take(a);
    const waiting = b.acquire(b.lock, 'x', 1);
    await tick(5);
    const attempts = b.store.callsOf('queue.acquire');
    const lastRefusal = attempts[attempts.length - 1];

    a.release(first);
    await tick();

    const hold = held(waiting);
    expect(hold.owner).toBe(b.owner(1));
    expect(hold.token).toBe(minted());
    expect(b.store.callsOf('queue.acquire')).toHaveLength(attempts.length);
    expect(b.store.received.map((m) => m.message)).toContain(`${b.owner(1)} w1 ${hold.token}`);
    expect(holders()).toEqual([b.owner(1)]);
    // Counted from a send before the grant, so never past the key's expiry.
    expect(hold.validUntil).toBe(lastRefusal.sentAt + LEASE - safety(LEASE));
    expect(hold.validUntil).toBeLessThanOrEqual(now() + redis.pttl(X.key) - safety(LEASE));
  });

  it("a grant whose message is lost is taken up by the wait's next heartbeat attempt, its deadline counted from the grant, not from that attempt", async () => {
    const a = client('a');
    const b = client('b');
    const first = await take(a);
    const waiting = b.acquire(b.lock, 'x', 1);
    await tick(5);
    b.store.dropMessages(1, isGrant);
    const grantedAt = now();

    a.release(first);
    await tick();
    expect(b.store.lost).toHaveLength(1);
    expect(holders()).toEqual([b.owner(1)]);
    expect(waiting.state).toBe('pending');

    const attempts = b.store.callsOf('queue.acquire').length;
    await tick(HEARTBEAT / 3);
    const hold = held(waiting);
    expect(b.store.callsOf('queue.acquire')).toHaveLength(attempts + 1);
    expect(hold.token).toBe(minted());
    // The take-up reply's PTTL: what is left of the grant's lease, never a fresh one.
    expect(hold.validUntil).toBe(grantedAt + LEASE - safety(LEASE));
    expect(hold.validUntil).toBeLessThanOrEqual(now() + redis.pttl(X.key) - safety(LEASE));
  });

  it("the release's reply hands the grant to a wait of the releasing client at once, without the message", async () => {
    const a = client('a');
    const first = await take(a, 1);
    const waiting = a.acquire(a.lock, 'x', 2);
    await tick(5);
    const attempts = a.store.callsOf('queue.acquire').length;
    a.store.dropMessages(1, isGrant);

    a.release(first);
    await tick();

    expect(a.store.lost).toHaveLength(1);
    const hold = held(waiting);
    expect(hold.owner).toBe(a.owner(2));
    expect(hold.token).toBe(minted());
    expect(a.store.callsOf('queue.acquire')).toHaveLength(attempts);
  });

  it("a grant of this client's own release, heard before that release's reply, is taken up after it: 'released' is told before 'acquired'", async () => {
    const a = client('a');
    const first = await take(a, 1);
    const waiting = a.acquire(a.lock, 'x', 2);
    await tick(5);
    const told: string[] = [];
    a.emitter.on('released', (e) => told.push(`released ${e.owner}`));
    a.emitter.on('acquired', (e) => told.push(`acquired ${e.owner}`));
    // The grant's message comes on the subscriber connection at once; the release's reply 20 ms later.
    a.store.latencyOf('queue.release', 20);

    const releasing = a.release(first);
    await tick(10);
    expect(a.store.received.map((m) => m.message)).toEqual([expect.stringMatching(new RegExp(`^${a.owner(2)} w\\w+ ${minted()}$`))]);
    expect(waiting.state).toBe('pending');

    await tick(10);
    expect(releasing.state).toBe('resolved');
    expect(held(waiting).token).toBe(minted());
    expect(told).toEqual([`released ${a.owner(1)}`, `acquired ${a.owner(2)}`]);
  });

  it("a wait that starts while this client's unlock of the key is on its way asks once that unlock has ended", async () => {
    const a = client('a');
    const first = await take(a, 1);
    const told: string[] = [];
    a.emitter.on('released', (e) => told.push(`released ${e.owner}`));
    a.emitter.on('acquired', (e) => told.push(`acquired ${e.owner}`));
    a.store.latencyOf('queue.release', 20);

    const releasing = a.release(first);
    const waiting = a.acquire(a.lock, 'x', 2);
    await tick(10);
    expect(waiting.state).toBe('pending');

    await tick(10);
    expect(releasing.state).toBe('resolved');
    expect(held(waiting).owner).toBe(a.owner(2));
    expect(told).toEqual([`released ${a.owner(1)}`, `acquired ${a.owner(2)}`]);
  });

  it("a grant whose message comes while the wait's attempt is out is taken up against that attempt's refusal, counted from its send", async () => {
    const a = client('a');
    const b = client('b');
    const first = await take(a);
    const waiting = b.acquire(b.lock, 'x', 1);
    await tick(5);
    // The heartbeat attempt runs (refused: a holds) when sent; its reply comes 20 ms later.
    b.store.latencyOf('queue.acquire', 20);
    await tick(HEARTBEAT / 3);
    const attempts = b.store.callsOf('queue.acquire');
    const out = attempts[attempts.length - 1];
    expect(out.answeredAt).toBeUndefined();

    a.release(first);
    await tick();
    expect(b.store.received.map((m) => m.message)).toContain(`${b.owner(1)} w1 ${minted()}`);
    expect(waiting.state).toBe('pending');

    await tick(20);
    const hold = held(waiting);
    expect(hold.token).toBe(minted());
    expect(b.store.callsOf('queue.acquire')).toHaveLength(attempts.length);
    expect(hold.validUntil).toBe(out.sentAt + LEASE - safety(LEASE));
  });

  it('a stale grant message (its token not above the refusal it would be taken up against) is dropped', async () => {
    const a = client('a');
    const b = client('b');
    const first = await take(a);
    const waiting = b.acquire(b.lock, 'x', 1);
    await tick(5);
    // A message of a grant minted before the wait's last refusal ran: it no longer stood then.
    b.engine.waits.granted(`${b.owner(1)} w1 ${first.token}`);
    await tick();
    expect(waiting.state).toBe('pending');
    expect(holders()).toEqual([a.owner(1)]);
    a.release(first);
    await tick();
    expect(held(waiting).token).toBe(minted());
  });
});

describe("waits 'queue': leaving", () => {
  it('an aborted wait rejects with the reason and leaves the queue, which is gone with it', async () => {
    const a = client('a');
    const b = client('b');
    await take(a);
    const abort = new AbortController();
    const waiting = b.acquire(b.lock, 'x', 1, { signal: abort.signal });
    await tick(10);
    expect(redis.list(XQ.queue)).toEqual([b.owner(1)]);

    const reason = new Error('caller gave up');
    abort.abort(reason);
    await tick();

    expect(waiting.state).toBe('rejected');
    expect(waiting.error).toBe(reason);
    expect(b.store.callsOf('queue.leave').map((c) => c.wait)).toEqual(['w1']);
    expect(redis.exists(XQ.queue, XQ.deadlines, XQ.tickets)).toBe(0);
  });

  it('an aborted wait gives back a grant it never took up, and the next head takes the lock', async () => {
    const a = client('a');
    const b = client('b');
    const c = client('c');
    const first = await take(a);
    const abort = new AbortController();
    const aborted = b.acquire(b.lock, 'x', 1, { signal: abort.signal });
    await tick(1);
    const next = c.acquire(c.lock, 'x', 1);
    await tick(5);
    expect(redis.list(XQ.queue)).toEqual([b.owner(1), c.owner(1)]);
    b.store.dropMessages(1, isGrant);

    a.release(first);
    await tick();
    // Granted to b in the server; b never learned of it.
    expect(holders()).toEqual([b.owner(1)]);
    expect(next.state).toBe('pending');
    const grantedToB = minted();

    abort.abort(new Error('gave up'));
    await tick();

    expect(aborted.state).toBe('rejected');
    expect(b.store.callsOf('queue.leave')).toHaveLength(1);
    // The grant went back with the leave, which told c, the head: c took the free lock.
    const hold = held(next);
    expect(hold.owner).toBe(c.owner(1));
    expect(hold.token).toBe(minted());
    expect(hold.token).toBeGreaterThan(grantedToB);
    expect(holders()).toEqual([c.owner(1)]);
  });
});

/** What the server holds of x when `call` settles, read in the settling turn (before anything the caller does next). */
function atSettle(call: Tracked<Hold | null>): { holders: string[]; queued: number } {
  const seen = { holders: [] as string[], queued: -1 };
  const read = () => Object.assign(seen, { holders: holders(), queued: redis.exists(XQ.queue, XQ.deadlines, XQ.tickets) });
  call.promise.then(read, read);
  return seen;
}

describe('a call settles after its cleanup', () => {
  it('a wait aborted while its attempt is out rejects only once the grant that attempt brought is given back', async () => {
    const b = client('b');
    b.store.latencyOf('queue.acquire', 50);
    b.store.transitOf('queue.release', 10);
    const abort = new AbortController();
    const waiting = b.acquire(b.lock, 'x', 1, { signal: abort.signal });
    const seen = atSettle(waiting);
    await tick(10);
    // Granted in the server (the lock was free); the reply is on its way.
    expect(holders()).toEqual([b.owner(1)]);
    const reason = new Error('caller gave up');
    abort.abort(reason);
    await tick(100);

    expect(waiting.state).toBe('rejected');
    expect(waiting.error).toBe(reason);
    expect(seen).toEqual({ holders: [], queued: 0 });
    const [giveBack] = b.store.callsOf('queue.release');
    expect(waiting.settledAt).toBeGreaterThanOrEqual(giveBack.answeredAt!);
  });

  it('a single attempt (waitTime 0) aborted on its way rejects only once its grant is given back', async () => {
    const b = client('b');
    b.store.latencyOf('queue.acquire', 50);
    b.store.transitOf('queue.release', 10);
    const abort = new AbortController();
    const attempt = b.acquire(b.lock, 'x', 1, { waitTime: 0, signal: abort.signal });
    const seen = atSettle(attempt);
    await tick(10);
    abort.abort(new Error('gave up'));
    await tick(100);

    expect(attempt.state).toBe('rejected');
    expect((attempt.error as Error).message).toBe('gave up');
    expect(seen).toEqual({ holders: [], queued: 0 });
    expect(b.store.callsOf('queue.release')).toHaveLength(1);
  });

  it('a single attempt whose grant is read after its lease ran out fails only once that grant is given back', async () => {
    const b = client('b');
    // Past the client's deadline for the grant, before the key's expiry in the server.
    b.store.latencyOf('queue.acquire', LEASE - safety(LEASE) / 2);
    b.store.transitOf('queue.release', 10);
    const attempt = b.acquire(b.lock, 'x', 1, { waitTime: 0 });
    const seen = atSettle(attempt);
    await tick(LEASE - safety(LEASE) / 2 + 20);

    expect(attempt.state).toBe('rejected');
    expect(attempt.error).toBeInstanceOf(LockUnavailableError);
    expect(seen).toEqual({ holders: [], queued: 0 });
  });

  /** a holds x, b waits, and a's release grants b, whose message is slow. */
  async function grantInFlight(options: { waitTime?: number; signal?: AbortSignal }): Promise<{ a: TestClient; b: TestClient; waiting: Tracked<Hold | null>; seen: ReturnType<typeof atSettle> }> {
    const a = client('a');
    const b = client('b');
    const first = await take(a);
    const waiting = b.acquire(b.lock, 'x', 1, options);
    const seen = atSettle(waiting);
    await tick(5);
    b.store.messageDelay = 100;
    b.store.transitOf('queue.leave', 10);
    a.release(first);
    await tick();
    expect(holders()).toEqual([b.owner(1)]);
    return { a, b, waiting, seen };
  }

  it("a wait aborted while a release's grant to it is on its way rejects only once its leave gave the grant back", async () => {
    const abort = new AbortController();
    const { b, waiting, seen } = await grantInFlight({ signal: abort.signal });
    abort.abort(new Error('gave up'));
    await tick(50);

    expect(waiting.state).toBe('rejected');
    expect(b.store.callsOf('queue.leave')).toHaveLength(1);
    expect(seen).toEqual({ holders: [], queued: 0 });
  });

  it("a wait whose deadline passes while a release's grant to it is on its way resolves null only once its leave gave the grant back", async () => {
    const { b, waiting, seen } = await grantInFlight({ waitTime: 50 });
    await tick(60);

    expect(waiting.state).toBe('resolved');
    expect(waiting.value).toBeNull();
    expect(b.store.callsOf('queue.leave')).toHaveLength(1);
    expect(seen).toEqual({ holders: [], queued: 0 });
  });

  it('close() with an attempt out whose reply is a grant resolves only once that grant is given back; the wait rejects, holding nothing', async () => {
    const b = client('b');
    b.store.latencyOf('queue.acquire', 50);
    const waiting = b.acquire(b.lock, 'x', 1);
    await tick(10);
    expect(holders()).toEqual([b.owner(1)]);

    const closing = track(b.engine.close());
    let atClose: string[] | undefined;
    closing.promise.then(() => (atClose = holders()));
    await tick(100);

    expect(closing.state).toBe('resolved');
    expect(atClose).toEqual([]);
    expect(waiting.state).toBe('rejected');
    expect((waiting.error as Error).message).toBe('client closed');
    expect([...b.engine.holds.of(X.id)]).toEqual([]);
  });
});

describe("waits 'queue': deadlines and failures", () => {
  it('a wait whose deadline passes while another owner holds the lock resolves null at the deadline (not before), and leaves', async () => {
    const a = client('a');
    const b = client('b');
    await take(a);
    const waiting = b.acquire(b.lock, 'x', 1, { waitTime: 100 });
    await tick(99);
    expect(waiting.state).toBe('pending');
    await tick(1);
    expect(waiting.state).toBe('resolved');
    expect(waiting.value).toBeNull();
    expect(waiting.settledAt).toBe(100);
    expect(b.store.callsOf('queue.leave')).toHaveLength(1);
    expect(redis.exists(XQ.queue)).toBe(0);
  });

  it('a wait whose last attempt failed rejects LockUnavailableError at its deadline, each failure reported as acquireFailed', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0); // backoffs of 12.5, 25, 50 ms
    const b = client('b');
    b.store.failNext(Infinity, 'queue.acquire');
    const waiting = b.acquire(b.lock, 'x', 1, { waitTime: 100 });
    await tick(99);
    expect(waiting.state).toBe('pending');
    await tick(1);

    expect(waiting.state).toBe('rejected');
    expect(waiting.settledAt).toBe(100);
    expect(waiting.error).toBeInstanceOf(LockUnavailableError);
    const error = waiting.error as LockUnavailableError;
    expect((error.cause as Error).message).toMatch(/queue\.acquire failed \(injected\)/);
    expect(b.failures.map((f) => f.attempt)).toEqual([1, 2, 3, 4]);
    expect(b.failures.map((f) => f.owner)).toEqual(Array(4).fill(b.owner(1)));
    // It never joined and no attempt is out: nothing to leave.
    expect(b.store.callsOf('queue.leave')).toHaveLength(0);
  });

  it('a wait whose attempts fail keeps retrying with backoff and takes the lock once Redis answers', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const b = client('b');
    b.store.failNext(2, 'queue.acquire');
    const waiting = b.acquire(b.lock, 'x', 1, { waitTime: 1_000 });
    await tick(12.5 + 25);
    expect(held(waiting).owner).toBe(b.owner(1));
    expect(b.failures.map((f) => f.attempt)).toEqual([1, 2]);
  });
});

describe("waits 'queue': late grants and dead waiters", () => {
  it('a grant read after its lease ran out is given back and counts as a failed attempt; the wait then takes the lock afresh', async () => {
    const b = client('b');
    b.store.latencyOf('queue.acquire', LEASE);
    const waiting = b.acquire(b.lock, 'x', 1);
    await tick(1);
    const [late] = b.store.callsOf('queue.acquire');
    const token = Number(redis.get(X.fence));
    b.store.latencyOf('queue.acquire', 0);

    await tick(LEASE);
    expect(late.outcome).toBe('ok');
    expect(b.failures).toHaveLength(1);
    expect(b.failures[0].error).toBeInstanceOf(CommandTimeoutError);
    expect(b.store.callsOf('queue.release', b.owner(1))).toHaveLength(1);
    await tick(1_000);
    const hold = held(waiting);
    expect(hold.token).toBe(minted());
    expect(hold.token).toBeGreaterThan(token);
    expect(hold.validUntil).toBeGreaterThan(now());
  });

  it('a waiter that stops asking (a dead process) is pruned from the queue after its heartbeat lease; the live one behind it is granted the lock', async () => {
    const a = client('a');
    const dead = client('dead');
    const c = client('c');
    const first = await take(a);
    const gone = dead.acquire(dead.lock, 'x', 1, { waitTime: 60_000 });
    await tick(1);
    const live = c.acquire(c.lock, 'x', 1);
    await tick(5);
    expect(redis.list(XQ.queue)).toEqual([dead.owner(1), c.owner(1)]);
    // From here on nothing of `dead` reaches the server (its leave neither).
    dead.store.failNext(Infinity);
    await tick(HEARTBEAT + HEARTBEAT / 3);
    expect(redis.list(XQ.queue)).toEqual([c.owner(1)]);

    a.release(first);
    await tick();
    expect(held(live).token).toBe(minted());
    expect(gone.state).toBe('pending');
  });
});

describe("waits 'queue': subscriptions and close", () => {
  it('a broken subscription wakes every wait of the key: each asks again, and a grant whose message was lost is taken up at once', async () => {
    const a = client('a');
    const b = client('b');
    const first = await take(a);
    const w1 = b.acquire(b.lock, 'x', 1);
    await tick(1);
    const w2 = b.acquire(b.lock, 'x', 2);
    await tick(5);
    b.store.cutSubscriptions();
    a.release(first);
    await tick(10);
    expect(holders()).toEqual([b.owner(1)]);
    expect(w1.state).toBe('pending');
    const asked = (owner: number) => b.store.callsOf('queue.acquire', b.owner(owner)).length;
    const before = [asked(1), asked(2)];

    b.store.restoreSubscriptions();
    await tick();

    expect(held(w1).token).toBe(minted());
    // Every listener of the key hears the break (a queue wait has two channels), so a wait may ask twice.
    expect(asked(1)).toBe(before[0] + 1);
    expect(asked(2)).toBeGreaterThan(before[1]);
    expect(w2.state).toBe('pending');
  });

  it("close() leaves the queues, and rejects pending waits only once the leaves settled and the subscriptions are dropped", async () => {
    const a = client('a');
    const b = client('b');
    await take(a);
    const waiting = b.acquire(b.lock, 'x', 1);
    await tick(10);
    expect(b.store.subscriptions.length).toBeGreaterThan(0);
    b.store.latencyOf('queue.leave', 50);

    const closing = track(b.engine.close());
    await tick(49);
    expect(b.store.callsOf('queue.leave')).toHaveLength(1);
    expect(closing.state).toBe('pending');
    expect(waiting.state).toBe('pending');

    await tick(1);
    const [leave] = b.store.callsOf('queue.leave');
    expect(leave.outcome).toBe('ok');
    expect(closing.state).toBe('resolved');
    expect(waiting.state).toBe('rejected');
    expect(waiting.error).toBeInstanceOf(LockError);
    expect((waiting.error as Error).message).toBe('client closed');
    expect(waiting.settledAt).toBeGreaterThanOrEqual(leave.answeredAt!);
    expect(b.store.subscriptions).toEqual([]);
    expect(redis.exists(XQ.queue)).toBe(0);
    // A call after close() rejects too.
    const late = b.acquire(b.lock, 'x', 2);
    await tick();
    expect((late.error as Error).message).toBe('client closed');
  });
});

describe('arrival order: the lock and the fair lock', () => {
  // The lock's barging window is 0 (lib/primitives/lock/plain.ts): it is the fair lock
  // in Redis, and a newcomer never takes a free lock ahead of the queue.
  it.each([
    ['the lock', 'lock'],
    ['the fair lock', 'fair'],
  ] as const)('%s grants in arrival order, and a newcomer never finds it free', async (_, kind) => {
    const primitive = (c: TestClient) => (kind === 'lock' ? c.lock : c.fair!);
    const a = client('a');
    const waiters = ['b', 'c', 'd'].map((id) => client(id));
    let hold = await take(a, 1, primitive(a));
    const waits: Tracked<Hold | null>[] = [];
    for (const w of waiters) {
      waits.push(w.acquire(primitive(w), 'x', 1));
      await tick(1);
    }
    expect(redis.list(XQ.queue)).toEqual(waiters.map((w) => w.owner(1)));

    const e = client('e');
    const order: string[] = [];
    let holder = a;
    for (let i = 0; i < waiters.length; i++) {
      holder.release(hold);
      // Right behind the release.
      const newcomer = e.acquire(primitive(e), 'x', 1, { waitTime: 0 });
      await tick();
      expect(newcomer.value).toBeNull();
      const next = waits.find((w) => w.state === 'resolved' && !order.includes(w.value!.owner));
      expect(next).toBeDefined();
      hold = next!.value!;
      order.push(hold.owner);
      holder = waiters.find((w) => hold.owner === w.owner(1))!;
      await tick(1);
    }
    expect(order).toEqual(waiters.map((w) => w.owner(1)));
    // One message per hand-off: the grant, to the head's client alone.
    expect(redis.published.filter((m) => isGrant(m.channel, m.message))).toHaveLength(waiters.length);
  });

  it("a release right behind which its own client asks again still grants the head", async () => {
    const a = client('a');
    const first = await take(a, 1);
    const waiting = a.acquire(a.lock, 'x', 2);
    await tick(1);
    a.release(first);
    const again = a.acquire(a.lock, 'x', 3, { waitTime: 0 });
    await tick();
    expect(held(waiting).owner).toBe(a.owner(2));
    expect(again.value).toBeNull();
    expect(redis.published.filter((m) => isGrant(m.channel, m.message))).toHaveLength(1);
  });
});

describe("waits 'client' (no queue: quorum mode)", () => {
  it("a client's waits of a key ask one at a time, oldest first, woken by 'released'", async () => {
    const a = client('a', { queue: false });
    const b = client('b', { queue: false });
    expect(b.lock.waits).toBe('client');
    const first = await take(a);
    const waits = [1, 2, 3].map((n) => b.acquire(b.lock, 'x', n));
    await tick(10);
    const asked = (n: number) => b.store.callsOf('acquire', b.owner(n)).length;
    // Only the first in line asks; the others wait behind it in this client.
    expect(asked(1)).toBeGreaterThan(0);
    expect([asked(2), asked(3)]).toEqual([0, 0]);
    // A single attempt does not pass the line either: it does not even ask.
    const attempt = b.acquire(b.lock, 'x', 4, { waitTime: 0 });
    await tick();
    expect(attempt.value).toBeNull();
    expect(asked(4)).toBe(0);

    a.release(first);
    await tick();
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const next = waits.find((w) => w.state === 'resolved' && !order.includes(w.value!.owner));
      expect(next).toBeDefined();
      order.push(next!.value!.owner);
      // The next in line asks (and is refused); nobody behind that one has asked.
      for (let n = i + 3; n <= 3; n++) expect(asked(n)).toBe(0);
      b.release(next!.value!);
      await tick(1);
    }
    expect(order).toEqual([1, 2, 3].map((n) => b.owner(n)));
  });
});
