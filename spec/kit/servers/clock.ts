/**
 * A server clock the tests can step (clock-shim.c, preloaded into redis-server): the
 * shim is compiled once per machine with gcc into os.tmpdir(), and each ServerClock is
 * an offset file the shim maps. step(ms) moves the server's wall clock (what expires
 * keys and what TIME answers) by that much from the real one; monotonic clocks stay.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SOURCE = path.join(__dirname, 'clock-shim.c');

/** The compiled shim, rebuilt when its source is newer. */
export function clockShim(): string {
  const lib = path.join(os.tmpdir(), 'holdfast-clock-shim.so');
  const stale = !fs.existsSync(lib) || fs.statSync(lib).mtimeMs < fs.statSync(SOURCE).mtimeMs;
  if (stale) {
    const tmp = `${lib}.${process.pid}`;
    execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-o', tmp, SOURCE, '-ldl']);
    fs.renameSync(tmp, lib); // atomic: a parallel build never leaves half a library
  }
  return lib;
}

export class ServerClock {
  private constructor(readonly file: string) {}

  /** A clock at offset 0, its file in `dir`. */
  static create(dir: string): ServerClock {
    const file = path.join(dir, 'clock-offset');
    const clock = new ServerClock(file);
    clock.set(0);
    return clock;
  }

  /** Environment for redis-server: the shim preloaded, reading this clock's file. */
  env(): NodeJS.ProcessEnv {
    return { ...process.env, LD_PRELOAD: clockShim(), HOLDFAST_CLOCK_OFFSET_FILE: this.file };
  }

  /** The server's clock is `ms` ahead of the real one (negative: behind), from now on. */
  set(ms: number): void {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(Math.round(ms)));
    // Written in place (not replaced): the shim maps this very file.
    const fd = fs.openSync(this.file, fs.existsSync(this.file) ? 'r+' : 'w');
    try {
      fs.writeSync(fd, buf, 0, 8, 0);
    } finally {
      fs.closeSync(fd);
    }
  }

  get offset(): number {
    return Number(fs.readFileSync(this.file).readBigInt64LE(0));
  }
}
