// A worker loop's rest between polls that new work (or stopping) can cut short.
export class WakeablePause {
  private wakeUp: (() => void) | undefined;

  // Resolves true when woken before `ms` are up.
  for(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = undefined;
        resolve(false);
      }, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve(true);
      };
    });
  }

  wake(): void {
    this.wakeUp?.();
  }
}
