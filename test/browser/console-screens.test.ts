// The console's screens in Chromium against stubbed console APIs (test/browser/fixtures.ts): the
// queue's keyboard and pagination, an alert, the 200-node network (hub, senders, details on tap),
// an episode's disposition with its CSRF token and audit entry, a party. The real APIs are driven
// by console.e2e.test.ts.
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactPath, launchChromium } from './chromium.ts';
import { SESSION, stubConsoleApi } from './fixtures.ts';
import { serveBuiltConsole } from './serve-built.ts';

let server: { app: FastifyInstance; base: string };
let browser: Browser;
let page: Page;
let stub: Awaited<ReturnType<typeof stubConsoleApi>>;
const errors: string[] = [];

beforeAll(async () => {
  server = await serveBuiltConsole();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
  stub = await stubConsoleApi(page);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

describe('console screens (stubbed API)', () => {
  it('pages the queue and moves through it with the keyboard', async () => {
    await page.goto(`${server.base}/console/alerts`);
    await page.waitForSelector('tr[data-alert-id]');
    expect(await page.locator('tr[data-alert-id]').count()).toBe(25);
    await page.keyboard.press('n');
    await page.waitForURL(/cursor=25/);
    await page.waitForSelector('tr[data-alert-id="alert-26"]');
    expect(await page.locator('tr[data-alert-id]').count()).toBe(5);
    await shot('screens-queue-page2.png');
    await page.keyboard.press('p');
    await page.waitForSelector('tr[data-alert-id="alert-1"]');
    await page.keyboard.press('j');
    expect(await page.getAttribute('tr[data-alert-id="alert-2"]', 'aria-selected')).toBe('true');
    await page.keyboard.press('k');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/alerts\/alert-1$/);
    await page.waitForSelector('[data-testid=evidence]');
    await page.click('text=Network view');
    await page.waitForURL(/\/console\/network\/hub-p$/);
  });

  it('draws a 200-node network with the hub, its senders and edge amounts', async () => {
    await page.waitForSelector('#cy[data-ready=true]');
    const net = await page.evaluate(() => (globalThis as any).__svcNetwork);
    expect(net.nodes).toHaveLength(200);
    const hub = net.nodes.find((n: any) => n.id === 'account:hub');
    expect(hub.open_alerts).toBe(1);
    const senders = net.edges.filter((e: any) => e.target === 'account:hub' && e.type === 'transfer').map((e: any) => e.source);
    expect(senders).toHaveLength(12);
    expect(net.edges.find((e: any) => e.source === 'account:sender1').label).toMatch(/301\.50 USD\n2026-08-/);
    await shot('screens-network.png');
  });

  it('dispositions an episode with a reason, sending the CSRF token, and shows the audit entry', async () => {
    await page.goto(`${server.base}/console/episodes/episode-1`);
    const form = page.locator('form[aria-label=Disposition]');
    await form.locator('select').selectOption('false_positive');
    await form.locator('button').click();
    await page.waitForSelector('text=choose a value and give a reason');
    await form.locator('textarea').fill('Club dues, known payers.');
    await form.locator('button').click();
    await expect.poll(() => page.textContent('[data-testid=disposition]')).toContain('false positive');
    expect(await page.textContent('[data-testid=audit]')).toContain('case.disposed');
    expect(stub.writes).toEqual([{ method: 'POST', path: '/episodes/episode-1/disposition', csrf: SESSION.csrf_token, body: { disposition: 'false_positive', reason: 'Club dues, known payers.' } }]);
    await shot('screens-episode.png');
  });

  it('shows a party with its posture, accounts and timeline', async () => {
    await page.goto(`${server.base}/console/parties/hub-p`);
    await page.waitForSelector('text=fan-1');
    expect(await page.textContent('[data-testid=band]')).toContain('high');
    await shot('screens-party.png');
    expect(errors).toEqual([]);
  });
});

const shot = (name: string) => page.screenshot({ path: artifactPath(name), fullPage: true });
