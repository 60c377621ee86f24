/**
 * What the failover faults of Cluster and Sentinel mode share: reading a server's
 * replication state, and waiting (bounded) until the failed-over pair is whole again,
 * telling the old master to follow the new one, as an operator would, when it has not
 * done so by itself within the first bound.
 */
import { rawCommand } from '../../servers';
import { until } from '../timing';

export const replication = (port: number): Promise<string> => rawCommand(port, ['INFO', 'replication'], 1_000);

/** `info` (INFO replication) is a replica's of the master on `master`, linked and done syncing. */
export const inSyncWith = (info: string, master: number): boolean =>
  /role:slave/.test(info) && new RegExp(`master_port:${master}\\b`).test(info) && /master_link_status:up/.test(info) && /master_sync_in_progress:0/.test(info);

/** One line of INFO output, for an error message. */
export const oneLine = (info: string): string => info.replace(/\r?\n/g, ' ');

export interface Rejoin {
  /** The pair is whole (polled every 50 ms). */
  whole(): Promise<boolean>;
  /** Tells the old master to follow the new one (its failure is ignored: `whole` decides). */
  tell(): Promise<unknown>;
  /** What the error says of the servers when the pair is still not whole. */
  detail(): Promise<string>;
  /** The bound before telling, and the bound after it. */
  firstMs: number;
  thenMs: number;
}

export async function untilRejoined(what: string, r: Rejoin): Promise<void> {
  try {
    await until(what, r.firstMs, r.whole);
  } catch {
    await r.tell().catch(() => undefined);
    await until(what, r.thenMs, r.whole).catch(async (error: Error) => {
      throw new Error(`${error.message} (the old master told to follow after ${r.firstMs} ms); ${await r.detail()}`);
    });
  }
}
