// A lock between processes on this machine: a file holding its owner's pid, written aside and
// hard-linked into place, so it never exists without the pid in it. A lock whose owner is gone (a
// killed command) is taken over. Used for one `up`/`down` at a time per data directory, and one
// Maven run at a time per cache (two on one local repository trip over each other's downloads).
import { link, readFile, rm, writeFile } from 'node:fs/promises';

export async function withFileLock<T>(lock: string, what: string, run: () => Promise<T>, waitMs = 15 * 60_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  const mine = `${lock}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(mine, `${process.pid}\n`);
  try {
    for (;;) {
      try {
        await link(mine, lock);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
        if (!Number.isInteger(owner) || owner <= 0 || !alive(owner)) {
          await rm(lock, { force: true });
          continue;
        }
        if (Date.now() > deadline) throw new Error(`${what}: another process (pid ${owner}) holds ${lock}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  } finally {
    await rm(mine, { force: true });
  }
  try {
    return await run();
  } finally {
    await rm(lock, { force: true });
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
