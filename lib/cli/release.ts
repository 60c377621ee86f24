// `holdfast release NAME`: lock.requestRelease(), saying how many holds were asked;
// `--force`: lock.forceUnlock(), saying whether there was a lock and who held it (read
// just before: who held it at the moment of the delete may differ).
import type { ReleaseOptions } from './args.js';
import { withClient } from './admin.js';
import { EXIT_OK } from './exit-codes.js';
import type { Io } from './io.js';
import { showHolder } from './show.js';

export function release(o: ReleaseOptions, io: Io): Promise<number> {
  return withClient(o, io, async ({ locks }) => {
    const lock = locks.getLock(o.name);
    if (!o.force) {
      const asked = await lock.requestRelease();
      io.stdout(asked === 0 ? `'${o.name}' is not held: nobody to ask\n` : `asked ${asked} ${asked === 1 ? 'hold' : 'holds'} of '${o.name}' to let go\n`);
      return EXIT_OK;
    }
    const before = await lock.inspect();
    const deleted = await lock.forceUnlock();
    const holders = before.holders.map(showHolder).join(', ');
    io.stdout(
      deleted
        ? `released '${o.name}'${holders ? `, held by ${holders}` : ''}\n`
        : `'${o.name}' was not locked: nothing to release\n`,
    );
    return EXIT_OK;
  });
}
