/** SCRIPT FLUSH on every server: the next EVALSHA gets NOSCRIPT and must load its scripts again. */
import { rawCommand } from '../../servers';
import type { Nemesis } from './nemesis';

export const scriptFlush: Nemesis = {
  async inject(run) {
    const begin = Date.now();
    await Promise.all(run.servers.servers.map((s) => rawCommand(s.port, ['SCRIPT', 'FLUSH'])));
    return { kind: 'scriptFlush', begin, end: Date.now() };
  },
};
