import { readdirSync, readFileSync } from 'node:fs';

// Reading other processes' /proc entries (Linux only). A process may have gone by the time it is
// read: the readings then give undefined or nothing rather than throw, since they run in timers
// and request handlers, where an exception would end the bench before its cleanup.

// The text of a file, or undefined when it cannot be read (gone, or not allowed).
export function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

// Direct children of pid, from every thread's children list (a thread other than the main one
// may have started a child).
export function childPids(pid: number): number[] {
  const pids: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return pids;
  }
  for (const task of tasks) {
    const text = readIfPresent(`/proc/${pid}/task/${task}/children`)?.trim();
    if (text) pids.push(...text.split(/\s+/).map(Number));
  }
  return pids;
}

// The command line of pid, its arguments joined by spaces; '' once it is gone.
export function commandLine(pid: number): string {
  return (readIfPresent(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim();
}
