/**
 * A wait's wake-up: wake() ends the current sleep, or the next one at once if none runs
 * (a wake-up between two sleeps is never lost).
 */
export class Bell {
  private wakeup: (() => void) | undefined;
  private woken = false;

  wake(): void {
    this.woken = true;
    this.wakeup?.();
  }

  /** Ends when woken, after `ms`, or once `until` settles, whichever comes first. */
  sleep(ms: number, until?: Promise<unknown>): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        // Ended already (a later sleep may be running now): nothing to do.
        if (this.wakeup !== done) return;
        if (timer) clearTimeout(timer);
        this.wakeup = undefined;
        this.woken = false;
        resolve();
      };
      this.wakeup = done;
      const timer = ms < Infinity ? setTimeout(done, Math.max(0, ms)) : undefined;
      until?.then(done, done);
    });
  }
}
