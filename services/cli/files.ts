import { readFile } from 'node:fs/promises';
import { UsageError } from './context.ts';

// Files an operator hands a command, read the same way by every command: a file that cannot be
// read, or is not what the command takes, is one line naming it (exit 2), never a stack trace.

export async function readTextFile(file: string, label = file): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${label}: ${(error as Error).message}`);
  }
}

// JSON as editors on Windows save it too: a leading byte-order mark is not part of the document.
export async function readJsonFile(file: string, label = file): Promise<unknown> {
  const text = (await readTextFile(file, label)).replace(/^\uFEFF/, '');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${label} is not JSON: ${(error as Error).message}`);
  }
}
