// `holdfast release NAME`: requestRelease() of every kind NAME may be held as (kinds.ts),
// saying how many holds of each were asked; `--force`: forceUnlock() (forceRelease() for
// the permits), saying what was held and by whom (read just before: who held it at the
// moment of the delete may differ).
import type { ReleaseOptions } from './args.js';
import { withClient } from './admin.js';
import { EXIT_OK } from './exit-codes.js';
import type { Io } from './io.js';
import { handlesOf, statusOf } from './kinds.js';
import { showHolder, showPermit } from './show.js';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function release(o: ReleaseOptions, io: Io): Promise<number> {
  return withClient(o, io, async ({ locks }) => {
    const handles = handlesOf(locks, o.name, o.urls.length > 1);
    const { lock, read, semaphore } = handles;
    if (!o.force) {
      const [holds, readers, permits] = await Promise.all([lock.requestRelease(), read?.requestRelease() ?? 0, semaphore?.requestRelease() ?? 0]);
      const lines: string[] = [];
      if (holds > 0) lines.push(`asked ${plural(holds, 'hold', 'holds')} of '${o.name}' to let go`);
      if (readers > 0) lines.push(`asked ${plural(readers, 'reader', 'readers')} of '${o.name}' to let go`);
      if (permits > 0) lines.push(`asked ${plural(permits, 'permit holder', 'permit holders')} of semaphore '${o.name}' to let go`);
      io.stdout(lines.length === 0 ? `'${o.name}' is not held: nobody to ask\n` : `${lines.join('\n')}\n`);
      return EXIT_OK;
    }
    const before = await statusOf(handles);
    const [deleted, readDeleted, permitsDeleted] = await Promise.all([lock.forceUnlock(), read?.forceUnlock() ?? false, semaphore?.forceRelease() ?? false]);
    const by = (who: string[]) => (who.length > 0 ? `, held by ${who.join(', ')}` : '');
    const lines: string[] = [];
    if (deleted) lines.push(`released '${o.name}'${by(before.holders.map(showHolder))}`);
    if (readDeleted) lines.push(`released the read holds of '${o.name}'${by(before.read?.holders.map(showHolder) ?? [])}`);
    if (permitsDeleted) lines.push(`released the permits of semaphore '${o.name}'${by(before.semaphore?.holders.map(showPermit) ?? [])}`);
    io.stdout(lines.length === 0 ? `'${o.name}' was not locked: nothing to release\n` : `${lines.join('\n')}\n`);
    return EXIT_OK;
  });
}
