/** The orchestrator's side of a forked child: typed requests with timeouts, and a clean exit. */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { withTimeout } from './async';
import type { BaselineCheckout } from './impls/types';
import { isReply, isReplyBody, type ReplyBodies, type Reply, type RequestType, type Unnumbered } from './ipc';
import { childCounts } from './log';

const CHILD_ENTRY = path.join(__dirname, 'child.ts');

export interface ForkOptions {
  /** The child builds the same implementation registry, baseline twins included. */
  baseline?: BaselineCheckout;
  /** Node flags beyond the loader, e.g. --expose-gc. */
  execArgv?: string[];
}

/** The child's argument carrying the baseline checkout (JSON). */
export const BASELINE_ARG = '--baseline=';

export class Child {
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (r: Reply & { ok: true }) => void; reject: (e: Error) => void }>();
  private exited = false;
  private unhandled = 0;
  private warnings = 0;

  constructor(readonly proc: ChildProcess) {
    proc.on('message', (m: unknown) => {
      if (!isReply(m)) {
        this.failAll(new Error(`child ${proc.pid}: malformed message ${JSON.stringify(m).slice(0, 200)}`));
        return;
      }
      this.unhandled = m.unhandled;
      this.warnings = m.warnings;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m);
      else p.reject(new Error(`child ${proc.pid}: ${m.error}`));
    });
    proc.on('exit', (code, signal) => {
      this.exited = true;
      childCounts.unhandled += this.unhandled;
      childCounts.warnings += this.warnings;
      this.failAll(new Error(`child ${proc.pid} exited (${code ?? signal})`));
    });
  }

  /** A fork of child.ts with the loader this process runs under (tsx). */
  static fork(opts: ForkOptions = {}): Child {
    const loaderArgs = process.execArgv.some((a) => a.includes('tsx')) ? process.execArgv : ['--import', 'tsx'];
    const args = opts.baseline ? [`${BASELINE_ARG}${JSON.stringify(opts.baseline)}`] : [];
    const proc = fork(CHILD_ENTRY, args, {
      execArgv: [...loaderArgs, ...(opts.execArgv ?? [])],
      // The child's stdout goes to our stderr: stdout is for the markdown report.
      stdio: ['ignore', 2, 2, 'ipc'],
    });
    return new Child(proc);
  }

  async request<K extends RequestType>(message: Unnumbered<K> & { type: K }, timeoutMs: number): Promise<ReplyBodies[K]> {
    if (this.exited) throw new Error(`child ${this.proc.pid} has exited`);
    const id = ++this.seq;
    const reply = new Promise<Reply & { ok: true }>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.proc.send({ ...message, id });
    });
    const { body } = await withTimeout(reply, timeoutMs, `child ${this.proc.pid} ${message.type}`);
    const guard = isReplyBody[message.type] as (b: unknown) => b is ReplyBodies[K];
    if (!guard(body)) throw new Error(`child ${this.proc.pid}: malformed ${message.type} reply`);
    return body;
  }

  /** Asks the child to exit (it exits when the IPC channel closes: --cpu-prof profiles get written), SIGKILL after 3 s. */
  kill(): void {
    if (this.exited) return;
    if (this.proc.connected) this.proc.disconnect();
    setTimeout(() => {
      if (!this.exited) this.proc.kill('SIGKILL');
    }, 3_000).unref();
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}
