import { Script } from '../../store/scripts/script.js';
import * as sources from './sources.js';

/** multi-take.lua: KEYS lock, fence, queue, tickets per name; ARGV owner, lease[, key retention]. A token per name, or null: none taken. */
export const multiTake = new Script<(string | number)[], readonly number[] | null>('multi-take', sources.multiTake, (raw) => {
  const r = (raw as unknown[]).map(Number);
  return r[0] === 1 ? r.slice(1) : null;
});

/** What multi-release.lua did with one name. */
export type MultiReleased = 'notHeld' | 'released' | 'queued';

/** multi-release.lua: KEYS lock, queue, tickets per name; ARGV owner. */
export const multiRelease = new Script<[owner: string], readonly MultiReleased[]>('multi-release', sources.multiRelease, (raw) =>
  (raw as unknown[]).map((v) => (Number(v) === 0 ? 'notHeld' : Number(v) === 2 ? 'released' : 'queued')),
);
