/**
 * jest globalTeardown: kills redis-server processes that specs started and
 * did not stop (a crashed or force-killed worker never runs its 'exit' hook),
 * using the pid files written by spec/kit/servers.
 *
 * A pid file is only trusted when the process still looks like the server it
 * names (redis-server on the recorded port, never 6379): PIDs are reused, and
 * a stale file must not kill an unrelated process. Files of a live foreign
 * owner (a concurrent jest run, a `servers.ts` CLI session) are left alone.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PID_DIR } from '../kit/servers';

interface PidFile {
  owner?: number;
  port?: number;
  dir?: string;
}

function readJson(file: string): PidFile {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as PidFile;
  } catch {
    return {};
  }
}

/** Command line (redis-server shows "redis-server 127.0.0.1:PORT") and parent pid, or undefined if gone. */
function processInfo(pid: number): { command: string; ppid: number } | undefined {
  try {
    if (fs.existsSync('/proc')) {
      const command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      // The command name may contain spaces and parentheses: ppid follows the last ')'.
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return { command, ppid };
    }
    const out = execFileSync('ps', ['-o', 'ppid=,command=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    const m = /^(\d+)\s+(.*)$/.exec(out);
    return m ? { command: m[2]!, ppid: Number(m[1]) } : undefined;
  } catch {
    return undefined;
  }
}

/** The owner is this jest process or one of its workers, or no longer exists. */
function ownerIsGoneOrOurs(owner: number | undefined): boolean {
  if (owner === undefined || owner === process.pid) return true;
  const info = processInfo(owner);
  return info === undefined || info.ppid === process.pid;
}

function looksLikeOurServer(pid: number, port: number | undefined): boolean {
  if (port === undefined || port === 6379) return false;
  const info = processInfo(pid);
  return info !== undefined && new RegExp(`redis-server\\b.*:${port}\\b`).test(info.command);
}

/** A garbled pid file must not make us delete anything but our own tmp dirs. */
function isOurTmpDir(dir: string): boolean {
  return path.dirname(dir) === os.tmpdir() && /^holdfast-(redis|cluster)-/.test(path.basename(dir));
}

export default async function globalTeardown(): Promise<void> {
  let names: string[];
  try {
    names = fs.readdirSync(PID_DIR);
  } catch {
    return; // no server was ever started
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const file = path.join(PID_DIR, name);
    const pid = Number(name);
    const meta = readJson(file);
    if (!ownerIsGoneOrOurs(meta.owner)) continue;
    if (looksLikeOurServer(pid, meta.port)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    }
    fs.rmSync(file, { force: true });
    if (meta.dir && isOurTmpDir(meta.dir)) fs.rmSync(meta.dir, { recursive: true, force: true });
  }
}
