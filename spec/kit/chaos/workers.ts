/**
 * The chaos run's worker processes (worker.ts), one slot each: spawned again after a
 * kill with the next generation number, stopped (finish, close, report 'closed') and
 * made to exit by themselves. An exit nobody asked for is a violation.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { TcpProxy } from '../proxy';
import type { Violation } from './records';
import type { WorkerConfig } from './worker';

const ROOT = path.resolve(__dirname, '../../..');

export class WorkerSlot {
  gen = 0;
  child?: ChildProcess;
  exited?: Promise<number | null>;
  ready?: Promise<void>;
  closed?: Promise<void>;
  /** We killed it on purpose: its exit is not a crash. */
  expectedExit = false;
  output = '';
  /** The worker's LockClient id, the first half of the owner ids it writes. */
  clientId?: string;

  constructor(
    readonly index: number,
    /** One per Redis master (Cluster node), all owned here: the worker connects to these only. */
    readonly proxies: TcpProxy[],
    private readonly configure: (slot: WorkerSlot) => WorkerConfig,
    private readonly violations: Violation[],
  ) {}

  spawn(): void {
    this.gen += 1;
    this.expectedExit = false;
    const config = this.configure(this);
    const child = spawn(process.execPath, ['--expose-gc', '-r', 'tsx/cjs', 'spec/kit/chaos/worker.ts', JSON.stringify(config)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    this.child = child;
    this.output = '';
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-4_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const gen = this.gen;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (!this.expectedExit) {
          this.violations.push({ kind: 'worker', message: `worker ${this.index} gen ${gen} (pid ${child.pid}) exited unexpectedly: code ${code} signal ${signal}\n${this.output}` });
        }
        resolve(code);
      });
    });
    this.ready = this.message((m) => (typeof m === 'object' && m !== null && 'ready' in m ? String((m as { ready: unknown }).ready) : undefined)).then((id) => {
      this.clientId = id;
    });
    this.closed = this.message((m) => (m === 'closed' ? true : undefined)).then(() => undefined);
    child.on('error', () => undefined);
  }

  /** The first IPC message of the current child that `pick` accepts. */
  message<T>(pick: (m: unknown) => T | undefined): Promise<T> {
    const child = this.child!;
    return new Promise((resolve) => {
      const onMessage = (m: unknown) => {
        const value = pick(m);
        if (value === undefined) return;
        child.off('message', onMessage);
        resolve(value);
      };
      child.on('message', onMessage);
    });
  }

  /** SIGKILL on purpose; resolves once the process is gone. */
  async kill(): Promise<void> {
    this.expectedExit = true;
    this.child!.kill('SIGKILL');
    await this.exited;
  }

  /** Cleanup after the run, whatever state it is in: SIGKILL (and SIGCONT, should it be stopped). */
  async reap(): Promise<void> {
    const c = this.child;
    if (c && c.exitCode === null && c.signalCode === null) {
      this.expectedExit = true;
      c.kill('SIGKILL');
      c.kill('SIGCONT');
      await this.exited;
    }
  }
}
