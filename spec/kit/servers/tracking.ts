/**
 * What the test servers leave behind if nobody stops them: every started PID is
 * recorded twice (in memory, killed on process 'exit'; and as a file under
 * os.tmpdir()/holdfast-test-pids, for jest's globalTeardown when a worker dies without
 * running 'exit'), with the temporary directories to remove.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

export const PID_DIR = path.join(os.tmpdir(), 'holdfast-test-pids');

// Process-wide tracking
//
// Under jest each spec file gets a sandboxed copy of `process` whose events are
// never emitted, and its own instance of this module. So the 'exit' hook is
// installed once on the real process (reached through the main vm context),
// and its registry lives there too, shared by every module instance.

interface PidFileContent {
  /** The node process that started the server: teardown spares live foreign owners. */
  owner: number;
  port: number;
  dir: string;
}

interface Registry {
  pids: Map<number, string>; // pid -> pid file
  dirs: Set<string>;
}

export const hostProcess = vm.runInThisContext('process') as NodeJS.Process;
const REGISTRY_KEY = Symbol.for('holdfast.test-servers.registry');

export function registry(): Registry {
  const slot = hostProcess as unknown as Record<symbol, Registry | undefined>;
  let reg = slot[REGISTRY_KEY];
  if (reg) return reg;
  const created: Registry = { pids: new Map(), dirs: new Set() };
  slot[REGISTRY_KEY] = created;
  // Only synchronous work is possible in 'exit'; SIGKILL cannot be ignored,
  // also not by a SIGSTOPped (paused) server.
  hostProcess.on('exit', () => {
    for (const [pid, file] of created.pids) {
      try {
        hostProcess.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      fs.rmSync(file, { force: true });
    }
    for (const dir of created.dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  reg = created;
  return reg;
}

export function trackPid(pid: number, content: PidFileContent): void {
  const file = path.join(PID_DIR, String(pid));
  fs.mkdirSync(PID_DIR, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(content));
  registry().pids.set(pid, file);
}

export function untrackPid(pid: number): void {
  const reg = registry();
  const file = reg.pids.get(pid);
  if (file) fs.rmSync(file, { force: true });
  reg.pids.delete(pid);
}

export function makeTmpDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  registry().dirs.add(dir);
  return dir;
}

export function removeTmpDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  registry().dirs.delete(dir);
}

/** What this module instance started and has not stopped yet, for stopAll(). */
/** What the kit started and has not stopped yet, for stopAll(). */
export const live = new Set<{ stop(): Promise<void> }>();
