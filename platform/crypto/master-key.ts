import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const FILE_NAME = 'master.key';

// The configured key wins. In embedded mode a key is generated into the data directory on first
// start (readable by its owner only) and read back on every later start.
export async function resolveMasterKey(configured: string | undefined, dataDir: string): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'base64url');
  const path = join(dataDir, FILE_NAME);
  try {
    return decode(await readFile(path, 'utf8'), path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    await writeFile(path, `${key.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return decode(await readFile(path, 'utf8'), path);
    throw error;
  }
}

function decode(text: string, path: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64url');
  if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte base64url key`);
  return key;
}
