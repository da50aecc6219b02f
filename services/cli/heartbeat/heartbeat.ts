// A process's sign of life for a supervisor that cannot ask it over HTTP (the pipelines and the
// webhook worker): while its event loop turns, the process rewrites a file every few seconds, and
// `svc alive <file>` (a liveness probe) says whether the file is fresh. It says nothing about the
// engines: an engine outage is waited out by the process (README, "Engines"), so a probe that
// checked them would restart every healthy worker during one.
import { stat, writeFile } from 'node:fs/promises';

const HEARTBEAT_EVERY_MS = 10_000;

// Writes the file now and every HEARTBEAT_EVERY_MS until the returned stop is called; stop also
// waits for a write still under way, so that nothing is written after it. A failed write is
// reported and tried again at the next beat: the file then grows stale, and the probe restarts a
// process that cannot write its heartbeat.
export async function startHeartbeat(file: string, onError: (error: unknown) => void, everyMs = HEARTBEAT_EVERY_MS): Promise<() => Promise<void>> {
  const beat = () => writeFile(file, `${new Date().toISOString()}\n`);
  await beat();
  let writing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    writing = beat().catch(onError);
  }, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await writing;
  };
}

// Whether the file was written within maxAgeMs of now (false when it is missing).
export async function heartbeatFresh(file: string, maxAgeMs: number, now: Date = new Date()): Promise<boolean> {
  try {
    return now.getTime() - (await stat(file)).mtimeMs <= maxAgeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
