import type Redis from 'ioredis';

/**
 * How many times the server has run these commands so far (INFO commandstats, summed):
 * the difference over a window counts what a client sent in it. `verbs` in lower case.
 */
export async function commandCalls(admin: Redis, ...verbs: string[]): Promise<number> {
  const stats = await admin.info('commandstats');
  return verbs.reduce((sum, verb) => sum + Number(new RegExp(`cmdstat_${verb}:calls=(\\d+)`).exec(stats)?.[1] ?? 0), 0);
}

/**
 * How many reads from client sockets the server has done so far (INFO stats): a
 * command that arrives in a socket write of its own costs a read of its own.
 */
export async function socketReads(admin: Redis): Promise<number> {
  const stats = await admin.info('stats');
  return Number(/total_reads_processed:(\d+)/.exec(stats)?.[1] ?? NaN);
}
