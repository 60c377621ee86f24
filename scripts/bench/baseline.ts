/**
 * --baseline <ref>: holdfast at another commit, checked out into a temporary git
 * worktree under os.tmpdir() with this checkout's node_modules symlinked in (so both
 * versions share ioredis and every peer, and the command counter sees both).
 *
 * Invariant: the worktree exists only while this process runs. It is removed on every
 * way out that runs JavaScript ('exit' fires after process.exit, a fatal error, and the
 * SIGINT/SIGTERM handlers); one left by a killed run (SIGKILL) is removed by the next
 * run, which recognises it by the dead pid in its name.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BaselineCheckout } from './impls/types';
import { log } from './log';

const DIR_PREFIX = 'holdfast-bench-baseline-';
/** This checkout: the repository the ref is resolved in, and whose node_modules is shared. */
const REPO_ROOT = path.join(__dirname, '..', '..');

function git(args: string[]): string {
  return execFileSync('git', ['-C', REPO_ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes worktrees of earlier runs whose process is gone, and git's records of them. */
function removeStale(): void {
  let removed = 0;
  for (const entry of fs.readdirSync(os.tmpdir())) {
    const pid = Number(/^holdfast-bench-baseline-(\d+)-/.exec(entry)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    fs.rmSync(path.join(os.tmpdir(), entry), { recursive: true, force: true });
    log(`baseline: removed the worktree of an earlier run (pid ${pid}): ${entry}`);
    removed++;
  }
  if (removed > 0) git(['worktree', 'prune']);
}

let current: string | undefined;

/** Removes this run's worktree, if any; synchronous (it runs in the 'exit' handler); idempotent. */
export function removeBaselineWorktree(): void {
  const dir = current;
  if (!dir) return;
  current = undefined;
  try {
    // The link first: nothing may ever delete through it into the shared node_modules.
    fs.rmSync(path.join(dir, 'node_modules'), { force: true });
    git(['worktree', 'remove', '--force', dir]);
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    try {
      git(['worktree', 'prune']);
    } catch {
      // Nothing more to do: git prunes records of missing worktrees itself in time.
    }
  }
}

/** Checks `ref` out into a temporary worktree; throws a clear Error when it cannot. */
export function createBaselineWorktree(ref: string): BaselineCheckout {
  let commit: string;
  try {
    commit = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new Error(`--baseline: '${ref}' is not a commit in ${REPO_ROOT}`);
  }
  removeStale();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  current = dir;
  process.once('exit', removeBaselineWorktree);
  git(['worktree', 'add', '--detach', '--quiet', dir, commit]);
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  if (!fs.existsSync(path.join(dir, 'lib', 'index.ts'))) throw new Error(`--baseline: ${ref} (${commit.slice(0, 9)}) has no lib/index.ts`);
  log(`baseline: holdfast@${ref} = ${commit.slice(0, 9)} checked out in ${dir}`);
  return { ref, commit, dir };
}
