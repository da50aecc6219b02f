// The console's screens in Chromium against stubbed console APIs (test/browser/fixtures.ts): the
// queue's keyboard and pagination, an alert, the 200-node network (hub, senders, details on tap,
// "Paths to…", an account expanded around its holder), the paths between two parties (form, URL,
// drawing, hop list, the governed 404), an episode's disposition with its CSRF token and audit
// entry, a party. The real APIs are driven
// by console.e2e.test.ts.
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactPath, launchChromium, tapNode } from './chromium.ts';
import { SESSION, stubConsoleApi } from './fixtures.ts';
import { serveBuiltConsole } from './serve-built.ts';
import type { ConsolePage } from './page-globals.ts';

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
    await page.waitForURL(/\/console\/network\/hub-p\?focus=account%3Ahub$/);
  });

  it('draws a 200-node network with the hub, its senders and edge amounts', async () => {
    await page.waitForSelector('#cy[data-ready=true]');
    const net = await page.evaluate(() => (globalThis as ConsolePage).__svcNetwork!);
    expect(net.nodes).toHaveLength(200);
    const hub = net.nodes.find((n) => n.id === 'account:hub');
    expect(hub?.open_alerts).toBe(1);
    const senders = net.edges.filter((e) => e.target === 'account:hub' && e.type === 'transfer').map((e) => e.source);
    expect(senders).toHaveLength(12);
    expect(net.edges.find((e) => e.source === 'account:sender1')?.label).toMatch(/301\.50 USD\n2026-08-/);
    await shot('screens-network.png');
  });

  it('expands an account around its holder, or says why it cannot', async () => {
    await tapNode(page, 'account:sender2');
    const expand = page.locator('.details button', { hasText: 'Expand here' });
    expect(await expand.getAttribute('title')).toContain('sender2-p');
    await expand.click();
    await expect.poll(() => stub.reads).toContain('/network/sender2-p?depth=1&limit=200');
    await page.waitForFunction(() => (globalThis as ConsolePage).__svcNetwork?.ready);
    // A filler account has no holder in the drawing: the action is there, disabled, with the reason.
    await tapNode(page, 'account:payer1');
    const disabled = page.locator('.details button', { hasText: 'Expand here' });
    expect(await disabled.isDisabled()).toBe(true);
    expect(await disabled.getAttribute('title')).toMatch(/No holder party/);
  });

  it('opens the paths from the centre to a selected party with "Paths to…"', async () => {
    await tapNode(page, 'party:sender1-p');
    await page.waitForSelector('.details h2:has-text("party sender1-p")');
    await page.click('.details >> text=Paths to…');
    await page.waitForURL(/\/console\/paths\?from=hub-p&to=sender1-p$/);
    await page.waitForSelector('[data-testid=paths] li.hop');
  });

  it('finds the paths between two parties from the form, draws them and lists their hops', async () => {
    await page.goto(`${server.base}/console/paths`);
    await page.fill('input[name=from]', 'hub-p');
    await page.fill('input[name=to]', 'sender1-p');
    await page.click('form[aria-label="paths between two parties"] button');
    await page.waitForURL(/\/console\/paths\?from=hub-p&to=sender1-p$/);
    await page.waitForSelector('#cy[data-ready=true]');
    const state = await page.evaluate(() => (globalThis as ConsolePage).__svcPaths!);
    expect(state.nodes.map((n) => n.id).sort()).toEqual(['account:hub', 'account:sender1', 'party:hub-p', 'party:sender1-p']);
    expect(state.edges).toHaveLength(3);
    expect(state.paths).toEqual([
      {
        length: 3,
        hops: [
          { from: 'hub-p', to: 'hub', type: 'holds', forward: true, amount: '', dates: '' },
          { from: 'hub', to: 'sender1', type: 'transfer', forward: false, amount: '2× 301.50 USD', dates: '2026-08-11 → 2026-08-13' },
          { from: 'sender1', to: 'sender1-p', type: 'holds', forward: false, amount: '', dates: '' },
        ],
      },
    ]);
    const hops = await page.locator('[data-testid=paths] li.hop').allTextContents();
    expect(hops[1]).toBe('hub ← transfer · 2× 301.50 USD · 2026-08-11 → 2026-08-13 — sender1');
    await shot('screens-paths.png');
  });

  it('shows the governed 404 of an unknown party on the paths screen', async () => {
    await page.fill('input[name=to]', 'nobody');
    await page.click('form[aria-label="paths between two parties"] button');
    await page.waitForURL(/to=nobody$/);
    const alert = page.locator('[role=alert]');
    await expect.poll(() => alert.textContent()).toContain('unknown party');
    expect(await alert.textContent()).toContain('to: no party with this external_id in this tenant');
    expect(await page.locator('#cy').count()).toBe(0);
  });

  it('draws a case again as it is when an action is refused for a change it did not show', async () => {
    await page.goto(`${server.base}/console/episodes/episode-1`);
    const form = page.locator('form[aria-label="Set status"]');
    await form.locator('select').selectOption('escalated');
    await form.locator('textarea').fill('Needs a second look.');
    await form.locator('button').click();
    await page.waitForSelector('[data-testid=case-status]:text-is("investigating")');
    expect(await page.locator('form[aria-label="Set status"] [role=alert]').textContent()).toBe('the case is investigating now, not open as shown. The page now shows the case as it is.');
    expect(stub.writes.map((w) => [w.path, w.body])).toEqual([
      ['/episodes/episode-1/status', { status: 'escalated', reason: 'Needs a second look.', expected: { case_status: 'open', disposition: null } }],
    ]);
    // As it was for the next test.
    stub.episode.case_status = 'open';
    stub.writes.length = 0;
  });

  it('dispositions an episode with a reason, sending the CSRF token, and shows the audit entry', async () => {
    await page.goto(`${server.base}/console/episodes/episode-1`);
    // Opened as the case page says it, beside the activity that opened it.
    const fact = (term: string) => page.locator(`dl.facts dt:text-is("${term}") + dd`).textContent();
    expect([await fact('Opened'), await fact('First activity')]).toEqual(['2026-09-01 09:00Z', '2026-08-31 08:00Z']);
    const form = page.locator('form[aria-label=Disposition]');
    await form.locator('select').selectOption('false_positive');
    await form.locator('button').click();
    await page.waitForSelector('text=choose a value and give a reason');
    await form.locator('textarea').fill('Club dues, known payers.');
    await form.locator('button').click();
    await expect.poll(() => page.textContent('[data-testid=disposition]')).toContain('false positive');
    expect(await page.textContent('[data-testid=audit]')).toContain('case.disposed');
    // With the case as the page showed it: one another analyst changed meanwhile is refused.
    expect(stub.writes).toEqual([
      {
        method: 'POST',
        path: '/episodes/episode-1/disposition',
        csrf: SESSION.csrf_token,
        body: { disposition: 'false_positive', reason: 'Club dues, known payers.', expected: { case_status: 'open', disposition: null } },
      },
    ]);
    await shot('screens-episode.png');
  });

  it('shows why assigning oneself was refused, and lets it be tried again', async () => {
    const button = page.locator('.assign button');
    await button.click();
    // The stub answers the assignment with a governed 404 ("no fixture").
    await expect.poll(() => page.locator('.assign [role=alert]').textContent()).toContain('no fixture');
    expect(await button.isDisabled()).toBe(false);
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

