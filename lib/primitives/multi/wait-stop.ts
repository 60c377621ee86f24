import type { Hold } from '../../engine/hold.js';

/**
 * The signal of one wait of a multi-lock take, for a later name: it aborts when the
 * caller's signal does (with its reason), or when a name taken earlier is lost (with
 * that loss): waiting on in that case would hold a later name while an earlier one is
 * retaken, out of the global order. `byLoss` tells the two apart.
 */
export class WaitStop {
  private readonly controller = new AbortController();
  private readonly detachers: (() => void)[] = [];
  private lost = false;

  constructor(caller: AbortSignal | undefined, taken: readonly Hold[]) {
    if (caller) this.follow(caller, false);
    for (const hold of taken) this.follow(hold.signal, true);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Aborted by a loss of an earlier name, not by the caller. */
  get byLoss(): boolean {
    return this.lost;
  }

  detach(): void {
    for (const detach of this.detachers.splice(0)) detach();
  }

  private follow(source: AbortSignal, isLoss: boolean): void {
    const abort = () => {
      if (this.controller.signal.aborted) return;
      this.lost = isLoss;
      this.controller.abort(source.reason);
    };
    if (source.aborted) return abort();
    source.addEventListener('abort', abort, { once: true });
    this.detachers.push(() => source.removeEventListener('abort', abort));
  }
}
