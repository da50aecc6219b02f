// Debian packages the local engines and the test set-up need (clickhouse-server, chromium),
// installed with apt-get when missing: CI runs as root on a fresh Debian machine. One install at a time waits for another
// apt run's lock rather than failing on it; a fresh machine's missing package lists are fetched
// once when the install cannot find the package.
import { execFile as execFileCallback } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const execFile = promisify(execFileCallback);
const LOCK_WAIT = ['-o', 'DPkg::Lock::Timeout=600'];

export type PackageInstall = { ok: true } | { ok: false; reason: string };

// Installs `pkg` unless `present()` already holds; checks `present()` again afterwards.
export async function ensureDebianPackage(pkg: string, present: () => boolean | Promise<boolean>, log: (line: string) => void = () => {}): Promise<PackageInstall> {
  if (await present()) return { ok: true };
  if (process.platform !== 'linux' || !existsSync('/usr/bin/apt-get')) return { ok: false, reason: `${pkg} is not installed and there is no apt-get to install it` };
  if (process.getuid?.() !== 0) return { ok: false, reason: `${pkg} is not installed and installing it needs root (apt-get install -y ${pkg})` };
  log(`installing Debian's ${pkg} package (apt-get install -y ${pkg})`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const aptGet = (args: string[]) => execFile('apt-get', ['-q', '-y', ...LOCK_WAIT, ...args], { env, maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 });
  try {
    await aptGet(['install', '--no-install-recommends', pkg]);
  } catch {
    try {
      await aptGet(['update']);
      await aptGet(['install', '--no-install-recommends', pkg]);
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? '').trim().split('\n').slice(-3).join(' | ');
      return { ok: false, reason: `apt-get install ${pkg} failed: ${stderr || (error as Error).message}` };
    }
  }
  return (await present()) ? { ok: true } : { ok: false, reason: `apt-get installed ${pkg} but what is needed from it is still missing` };
}
