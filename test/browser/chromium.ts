// Debian's Chromium driven through playwright-core (no downloaded browser). Installs the
// `chromium` package with apt-get when /usr/bin/chromium is missing (CI is a fresh Debian machine
// where we are root).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { ensureDebianPackage } from '../../platform/local-engines/debian-packages.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));
export const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking'];

// Installs Debian's chromium when missing. The global test set-up calls it once before any test
// file runs (two files installing at once would fight over apt's lock).
export async function ensureChromium(): Promise<void> {
  const installed = await ensureDebianPackage('chromium', () => existsSync(CHROMIUM), (line) => process.stderr.write(`Chromium: ${line}\n`));
  if (!installed.ok) throw new Error(installed.reason);
}

export async function launchChromium(): Promise<Browser> {
  await ensureChromium();
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

export function artifactPath(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}
