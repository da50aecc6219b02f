// The analysts' console API on a free 127.0.0.1 port over a test API's database, a console user
// with a one-time password, and a Chromium page that records every page error and console error
// (a CSP violation is one) for the test to assert there were none.
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import type { Clock } from '../../platform/clock.ts';
import { loadConfig } from '../../platform/config.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { createConsoleUser } from '../../services/console/users.ts';
import { createConsole } from '../../services/console/wiring.ts';
import { launchChromium } from './chromium.ts';

export interface ConsoleInChromium {
  base: string;
  oneTimePassword: string;
  page: Page;
  pageErrors: string[];
  close: () => Promise<void>;
}

export async function openConsoleInChromium(
  api: { db: { pool: Pool }; masterKey: Buffer; clock: Clock },
  user: { email: string; role: 'analyst' | 'supervisor' },
): Promise<ConsoleInChromium> {
  let consoleApp: FastifyInstance | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await consoleApp?.close();
  };
  try {
    ({ app: consoleApp } = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: api.db.pool, masterKey: api.masterKey, clock: api.clock, logger: false }));
    await consoleApp.listen({ host: '127.0.0.1', port: 0 });
    const address = consoleApp.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const created = await createConsoleUser(api.db.pool, { tenantId: 'acme', ...user }, api.clock.now());
    if (created.kind !== 'created') throw new Error(created.kind);

    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) pageErrors.push(message.text());
    });
    return { base, oneTimePassword: created.password, page, pageErrors, close };
  } catch (error) {
    await close();
    throw error;
  }
}
