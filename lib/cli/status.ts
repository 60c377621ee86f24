// `holdfast status NAME [--json]`: lock.inspect() of NAME, with its read holds
// (read-write lock) and its permits (semaphore) when it has some, as JSON or as text.
import type { StatusOptions } from './args.js';
import { withClient } from './admin.js';
import { EXIT_OK } from './exit-codes.js';
import type { Io } from './io.js';
import { handlesOf, statusOf } from './kinds.js';
import { showStatus } from './show.js';

export function status(o: StatusOptions, io: Io): Promise<number> {
  return withClient(o, io, async ({ locks }) => {
    const info = await statusOf(handlesOf(locks, o.name, o.urls.length > 1));
    io.stdout(o.json ? `${JSON.stringify(info)}\n` : showStatus(info));
    return EXIT_OK;
  });
}
