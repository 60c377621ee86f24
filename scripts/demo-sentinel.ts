/**
 * Part of `npm run demo`: a Sentinel failover while a lock is held, without and with
 * `syncReplicas`. The replicas are cut off (SIGSTOP, their links killed on the primary)
 * while client A takes the lock, and the primary is SIGKILLed the moment A's
 * acquisition resolves; the replicas come back 300 ms after it started. Without
 * syncReplicas the grant is in no replica when the primary dies, and client B gets the
 * lock on the new primary: two owners. With it, A's acquisition resolves only once a
 * replica acknowledged it, and the lock survives the failover.
 */
import Redis from 'ioredis';
import { LockClient, type ClientOptions, type LostEvent } from '../lib';
import { startSentinelTopology } from '../spec/kit/servers/sentinel';
import { rawCommand } from '../spec/kit/servers';

export interface FailoverOutcome {
  /** Another client got the lock after the failover while A had not released it. */
  secondOwner: boolean;
  /** A's hold was reported lost. */
  lost: LostEvent | undefined;
}

export async function failoverWhileHeld(say: (text: string) => void, options: ClientOptions, keyPrefix: string): Promise<FailoverOutcome> {
  const t = await startSentinelTopology();
  const connections: Redis[] = [];
  const connect = () => {
    const c = new Redis({ sentinels: t.sentinelAddresses, name: t.name });
    c.on('error', () => undefined); // the failover is the show; holdfast reports what matters
    connections.push(c);
    return c;
  };
  const a = new LockClient(connect(), { ...options, keyPrefix, watchdogTimeout: 10_000 });
  const b = new LockClient(connect(), { ...options, keyPrefix, watchdogTimeout: 10_000 });
  for (const c of [a, b]) c.on('error', () => undefined);
  try {
    await Promise.all(connections.map((c) => c.ping()));
    say(`primary :${t.primary.port}, replicas :${t.replicas.map((r) => r.port).join(' :')}, sentinels :${t.sentinels.map((s) => s.port).join(' :')}`);
    let lost: LostEvent | undefined;
    a.on('lost', (e) => (lost ??= e));
    const lock = a.getLock('payments');
    for (const r of t.replicas) r.pause();
    await rawCommand(t.primary.port, ['CLIENT', 'KILL', 'TYPE', 'replica']);
    say('replicas cut off (SIGSTOP); they come back in 300 ms');
    const resume = setTimeout(() => t.replicas.forEach((r) => r.resume()), 300);
    const asked = performance.now();
    try {
      await lock.tryLock({ waitTime: 20_000 });
      say(`client A holds 'payments' after ${Math.round(performance.now() - asked)} ms; primary killed (SIGKILL) at once`);
      await t.primary.kill();
    } finally {
      clearTimeout(resume);
      t.replicas.forEach((r) => r.resume());
    }
    const killed = performance.now();
    const port = await t.waitFailover(t.primary.port, { replicas: 1 });
    say(`sentinels promoted :${port} after ${Math.round(performance.now() - killed)} ms`);
    const secondOwner = await b.getLock('payments').tryLock();
    say(secondOwner ? 'client B tryLock: granted. Two owners of one lock' : 'client B tryLock: refused, client A still holds it');
    let timer: NodeJS.Timeout | undefined;
    const renewedOrLost = await Promise.race([
      new Promise<string>((resolve) => lock.once('renewed', () => resolve('client A renewed its hold on the new primary'))),
      new Promise<string>((resolve) => a.once('lost', (e) => resolve(`client A told: lost (${e.reason})`))),
      new Promise<string>((resolve) => (timer = setTimeout(() => resolve('client A: no renewal within 15 s'), 15_000))),
    ]);
    clearTimeout(timer);
    say(renewedOrLost);
    return { secondOwner, lost };
  } finally {
    await a.close();
    await b.close();
    for (const c of connections) c.disconnect();
    await t.stop();
  }
}
