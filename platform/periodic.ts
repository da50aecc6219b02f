// A task run every `ms` in the background: a run still going when the next is due lets that one
// pass, so runs never pile up on a pool, and stop waits for the run in progress (a sweep must not
// go on against a pool its process is about to end).
export interface Periodic {
  stop(): Promise<void>;
}

export function every(ms: number, task: () => Promise<unknown>, onError?: (error: unknown) => void): Periodic {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= task()
      .then(() => undefined, (error: unknown) => onError?.(error))
      .finally(() => (running = undefined));
  }, ms);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
