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

  sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = ms < Infinity ? setTimeout(() => done(), Math.max(0, ms)) : undefined;
      const done = () => {
        if (timer) clearTimeout(timer);
        this.wakeup = undefined;
        this.woken = false;
        resolve();
      };
      this.wakeup = done;
    });
  }
}
