import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

// Where the shared datasets are: SVC_DATASETS_DIR, else `shared/datasets` beside the checkout (as
// CI lays it out), else beside the repository this one was cloned from when that is a local path
// (a scratch clone in a temporary directory). Missing data fails the suite loudly: a dataset test
// is never skipped.
const ROOT = resolve(import.meta.dirname, '../..');

function originDir(): string | undefined {
  try {
    const url = execFileSync('git', ['config', '--get', 'remote.origin.url'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return url && isAbsolute(url) ? url : undefined;
  } catch {
    return undefined;
  }
}

export function datasetsDir(): string {
  const origin = originDir();
  const candidates = [process.env.SVC_DATASETS_DIR, join(ROOT, '..', 'shared', 'datasets'), origin && join(origin, '..', 'shared', 'datasets')];
  const found = candidates.find((dir): dir is string => dir !== undefined && existsSync(dir));
  if (!found) throw new Error(`shared datasets not found (looked in ${candidates.filter(Boolean).join(', ')}); set SVC_DATASETS_DIR`);
  return found;
}

export const dataset = (...path: string[]) => join(datasetsDir(), ...path);
