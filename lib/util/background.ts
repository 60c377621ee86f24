/**
 * Work that runs on its own (no caller awaits it), tracked so that its owner can wait for
 * all of it when closing. Each piece must settle by itself (bounded); its outcome is its
 * own business (handled where it was started).
 */
export class Background {
  private readonly pending = new Set<Promise<unknown>>();

  track(work: Promise<unknown>): void {
    this.pending.add(work);
    const done = () => void this.pending.delete(work);
    work.then(done, done);
  }

  /** Resolves once every tracked piece has settled, those started meanwhile included. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
