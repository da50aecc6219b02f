// Debian's Chromium driven through playwright-core (no downloaded browser). Installs the
// `chromium` package with apt-get when /usr/bin/chromium is missing (CI is a fresh Debian machine
// where we are root).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureDebianPackage } from '../../platform/local-engines/debian-packages.ts';
import type { ConsolePage } from './page-globals.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));
const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking'];

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

// A real click on a drawn node: its position read from the Cytoscape instance the container holds
// (Cytoscape's own registration, not something the page publishes), then the details panel naming
// it. Retried: a layout still settling on a busy machine can move the node between reading its
// position and the click.
export async function tapNode(page: Page, id: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const at = await page.evaluate((nodeId) => {
      const container = (globalThis as ConsolePage).document.getElementById('cy');
      const node = container._cyreg.cy.getElementById(nodeId);
      node.cy().center(node);
      const p = node.renderedPosition();
      const box = container.getBoundingClientRect();
      return { x: box.left + p.x, y: box.top + p.y };
    }, id);
    await page.mouse.click(at.x, at.y);
    try {
      await page.waitForSelector(`.details dd:text-is("${id}")`, { timeout: 5_000 });
      return;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}
