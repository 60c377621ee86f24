/**
 * Raw counters the meter reads: commands sent by this process, the machine's busy CPU
 * time, and a server's own counters (INFO).
 */
import fs from 'node:fs';
import Redis from 'ioredis';

let sent = 0;
let installed = false;

/**
 * Counts every command any ioredis Redis instance in this process sends (ours,
 * holdfast's subscriber duplicate, node-redisson's own connections, the baseline's):
 * wraps Redis.prototype.sendCommand once. Call before opening connections.
 */
export function installCommandCounter(): void {
  if (installed) return;
  installed = true;
  const proto = Redis.prototype as unknown as { sendCommand: (...args: unknown[]) => unknown };
  const original = proto.sendCommand;
  proto.sendCommand = function (this: unknown, ...args: unknown[]) {
    sent++;
    return original.apply(this, args);
  };
}

/** Commands sent by this process so far (round trips, pipelining aside). */
export function sentCommands(): number {
  return sent;
}

/** Busy CPU time of the whole machine so far (Linux /proc/stat), in microseconds; NaN where unavailable. */
export function machineBusyUs(): number {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + (steal ?? 0)) * (1e6 / 100); // USER_HZ = 100
  } catch {
    return NaN;
  }
}

export function cpuUs(usage: NodeJS.CpuUsage): number {
  return usage.user + usage.system;
}

export interface ServerSnap {
  cmds: number;
  evalsha: number;
  cpuS: number;
  /** INFO commandstats calls per command (includes commands run inside scripts). */
  calls: Record<string, number>;
}

/** The server's counters; the INFO call itself is counted by the server after it ran. */
export async function snapServer(admin: Redis): Promise<ServerSnap> {
  const info = await admin.info('all');
  const num = (re: RegExp) => Number(re.exec(info)?.[1] ?? 0);
  return {
    cmds: num(/total_commands_processed:(\d+)/),
    evalsha: num(/cmdstat_evalsha:calls=(\d+)/),
    cpuS: num(/used_cpu_user:([\d.]+)/) + num(/used_cpu_sys:([\d.]+)/),
    calls: Object.fromEntries([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1], Number(m[2])])),
  };
}
