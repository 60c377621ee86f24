// `holdfast status NAME [--json]`: lock.inspect(), as JSON (the same object) or as text.
import type { StatusOptions } from './args.js';
import { withClient } from './admin.js';
import { EXIT_OK } from './exit-codes.js';
import type { Io } from './io.js';
import { showStatus } from './show.js';

export function status(o: StatusOptions, io: Io): Promise<number> {
  return withClient(o, io, async ({ locks }) => {
    const info = await locks.getLock(o.name).inspect();
    io.stdout(o.json ? `${JSON.stringify(info)}\n` : showStatus(info));
    return EXIT_OK;
  });
}
