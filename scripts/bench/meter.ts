/** The cost of one measured run: time, Node CPU, commands sent, server commands and CPU. */
import type Redis from 'ioredis';
import { cpuUs, machineBusyUs, sentCommands, snapServer, type ServerSnap } from './counters';
import { sum } from './stats';

export interface Cost {
  ms: number;
  nodeCpuUs: number;
  sent: number;
  redisCmds: number;
  evalsha: number;
  redisCpuUs: number;
  /** Server-side calls per command during the run (all servers; INFO itself excluded). */
  cmdMix: Record<string, number>;
  /** Machine-wide busy CPU time (/proc/stat), microseconds; NaN where unavailable. */
  machineBusyUs: number;
}

function mixDelta(before: ServerSnap[], after: ServerSnap[]): Record<string, number> {
  const mix: Record<string, number> = {};
  after.forEach((s, i) => {
    for (const [cmd, n] of Object.entries(s.calls)) {
      const d = n - (before[i].calls[cmd] ?? 0) - (cmd === 'info' ? 1 : 0);
      if (d > 0) mix[cmd] = (mix[cmd] ?? 0) + d;
    }
  });
  return mix;
}

export class Meter {
  private s0: ServerSnap[] = [];
  private sent0 = 0;
  private cpu0: NodeJS.CpuUsage = { user: 0, system: 0 };
  private t0 = 0;
  private busy0 = 0;

  constructor(private readonly admins: Redis[]) {}

  async start(): Promise<void> {
    this.s0 = await Promise.all(this.admins.map(snapServer));
    this.sent0 = sentCommands();
    this.cpu0 = process.cpuUsage();
    this.busy0 = machineBusyUs();
    this.t0 = performance.now();
  }

  async stop(): Promise<Cost> {
    const ms = performance.now() - this.t0;
    const busy = machineBusyUs() - this.busy0;
    const cpu = process.cpuUsage(this.cpu0);
    const sent = sentCommands() - this.sent0;
    const s1 = await Promise.all(this.admins.map(snapServer));
    return {
      ms,
      nodeCpuUs: cpuUs(cpu),
      sent,
      // The first INFO is counted after it ran: one per server in the delta.
      redisCmds: sum(s1.map((s, i) => s.cmds - this.s0[i].cmds - 1)),
      evalsha: sum(s1.map((s, i) => s.evalsha - this.s0[i].evalsha)),
      redisCpuUs: sum(s1.map((s, i) => (s.cpuS - this.s0[i].cpuS) * 1e6)),
      cmdMix: mixDelta(this.s0, s1),
      machineBusyUs: busy,
    };
  }
}
