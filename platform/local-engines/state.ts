// SVC_DATA_DIR/engines/state.json: what `svc engines up` started, so `status` and `down` (other
// invocations, later) know the pids to check and the ports to print. Ports stay recorded after
// `down`, so the next `up` serves the same addresses (the exports an operator already evaluated).
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withFileLock } from './file-lock.ts';
import type { RunningProcess } from './processes.ts';
import type { EngineName, EnginePorts } from './types.ts';

export interface EngineRecord {
  version: string;
  ports: EnginePorts;
  // Absent once stopped.
  process?: RunningProcess & { startedAt: string };
  // Where the server's own output goes (the first place to look when it will not start).
  logFile?: string;
}

export interface EnginesState {
  engines: Partial<Record<EngineName, EngineRecord>>;
}

export function enginesRoot(dataDir: string): string {
  return join(dataDir, 'engines');
}

export async function readState(dataDir: string): Promise<EnginesState> {
  const file = join(enginesRoot(dataDir), 'state.json');
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (!text) return { engines: {} };
  try {
    return JSON.parse(text) as EnginesState;
  } catch (error) {
    throw new Error(`${file} is not valid JSON (${(error as Error).message}): fix or remove it`);
  }
}

// Written whole to a temporary file and renamed: a reader never sees half a state.
export async function writeState(dataDir: string, state: EnginesState): Promise<void> {
  await mkdir(enginesRoot(dataDir), { recursive: true });
  const file = join(enginesRoot(dataDir), 'state.json');
  await writeFile(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
}

// One `up` or `down` at a time per data directory: two at once would start an engine twice on
// the same files. A second `up` waits for the first (a cold one downloads for minutes), then finds
// its engines running.
export async function withStateLock<T>(dataDir: string, run: () => Promise<T>): Promise<T> {
  await mkdir(enginesRoot(dataDir), { recursive: true });
  return withFileLock(join(enginesRoot(dataDir), '.lock'), 'svc engines', run);
}
