// The analysts' console end to end in Debian's Chromium: a planted fan-in (many new senders paying
// one hub account) goes through the API and the pipelines to a real alert; an analyst logs in
// through the web app, changes the one-time password, opens the alert from the queue with the
// keyboard, finds the hub and its senders in the network view and a path from the hub's holder to a
// sender's holder, dispositions the case and sees the audit entry. Screenshots of every key screen go to test-artifacts/console/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../../console/web/ensure-built.ts';
import { startDetectionWorld, type DetectionWorld } from '../support/detection-world.ts';
import { artifactPath } from './chromium.ts';
import { openConsoleInChromium, type ConsoleInChromium } from './console-in-chromium.ts';
import type { ConsolePage } from './page-globals.ts';

const HOUR = 3_600_000;
const AT = Date.parse('2026-09-01T10:00:00Z');
const before = (hours: number) => new Date(AT - hours * HOUR).toISOString();
const SENDERS = Array.from({ length: 12 }, (_, i) => `sender${i + 1}`);
const NEW_PASSWORD = 'a long enough new password';

let world: DetectionWorld;
let chromium: ConsoleInChromium | undefined;
let base: string;
let page: Page;
let oneTimePassword: string;
let pageErrors: string[] = [];
const shot = (name: string) => page.screenshot({ path: artifactPath(name), fullPage: true });

beforeAll(async () => {
  const [, w] = await Promise.all([ensureConsoleBuilt(), startDetectionWorld()]);
  world = w;
  await world.startDetection();
  // One party per account; the hub's holder is hub-p.
  for (const id of ['hub', 'onward', ...SENDERS]) {
    await world.party(`${id}-p`);
    await world.account(id, `${id}-p`);
  }
  await world.movements(SENDERS.map((s, i) => ({ id: `fan-${i + 1}`, from: [s, `${s}-p`], to: ['hub', 'hub-p'], value: 30_000 + i * 150, at: before(70 - i * 3) })));
  await world.movement({ id: 'fan-out', from: ['hub', 'hub-p'], to: ['onward', 'onward-p'], value: 300_000, at: before(2) });
  await world.settle();

  chromium = await openConsoleInChromium(world.api, { email: 'ana@example.com', role: 'analyst' });
  ({ base, oneTimePassword, page, pageErrors } = chromium);
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await world?.close();
});

describe('the analysts console in Chromium', () => {
  it('plants a fan-in that raises a real alert on the hub', async () => {
    const { rows } = await world.api.db.pool.query(`SELECT detector_id FROM alerts WHERE tenant_id = 'acme' AND subject_kind = 'account' AND subject_id = 'hub' AND status = 'open'`);
    expect(rows.length).toBeGreaterThan(0);
  });

  it('serves the app with a strict CSP, logs in and changes the one-time password', async () => {
    const res = await page.goto(`${base}/console/alerts`);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForURL(/\/console\/login/);
    await shot('01-login.png');
    await page.fill('input[name=tenant]', 'acme');
    await page.fill('input[name=email]', 'ana@example.com');
    await page.fill('input[name=password]', oneTimePassword);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/console\/password/);
    await shot('02-change-password.png');
    await page.fill('input[name=current_password]', oneTimePassword);
    await page.fill('input[name=new_password]', NEW_PASSWORD);
    await page.fill('input[name=repeat]', NEW_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/console\/alerts/);
    await expect.poll(() => page.textContent('[data-testid=who]')).toContain('ana@example.com');
    // A reload keeps the session (who-am-I gives the CSRF token back).
    await page.reload();
    await expect.poll(() => page.textContent('[data-testid=who]')).toContain('ana@example.com');
    expect(pageErrors).toEqual([]);
  });

  it('opens the fan-in alert from the queue with the keyboard', async () => {
    await page.goto(`${base}/console/alerts?detector=fan_in`);
    await page.waitForSelector('tr[data-alert-id]');
    await shot('03-alert-queue.png');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/alerts\/[^/?]+$/);
    await page.waitForSelector('[data-testid=evidence]');
    expect(await page.textContent('h1')).toContain('fan_in');
    await shot('04-alert.png');
    expect(pageErrors).toEqual([]);
  });

  it('draws the hub and its senders in the network view', async () => {
    // The shareable URL of the hub's holder's network.
    await page.goto(`${base}/console/network/hub-p?depth=3`);
    await page.waitForSelector('#cy[data-ready=true]');
    const net = await page.evaluate(() => (globalThis as ConsolePage).__svcNetwork as { nodes: Array<{ id: string; label: string; kind: string; degree: number; open_alerts: number }>; edges: Array<{ source: string; target: string; type: string }> });
    const hub = net.nodes.find((n) => n.kind === 'account' && n.label.includes('hub'));
    expect(hub).toBeDefined();
    const senders = new Set(net.edges.filter((e) => e.target === hub!.id && e.type !== 'holds').map((e) => e.source));
    const senderLabels = net.nodes.filter((n) => senders.has(n.id)).map((n) => n.label);
    for (const s of SENDERS) expect(senderLabels.some((l) => l.includes(s))).toBe(true);
    await shot('05-network.png');
    expect(pageErrors).toEqual([]);
  });

  it('finds a path from the hub\'s holder to a sender\'s holder', async () => {
    await page.goto(`${base}/console/paths?from=hub-p&to=sender3-p`);
    await page.waitForSelector('#cy[data-ready=true]');
    const state = await page.evaluate(() => (globalThis as ConsolePage).__svcPaths as { paths: Array<{ length: number; hops: Array<{ from: string; to: string; type: string }> }> });
    expect(state.paths.length).toBeGreaterThan(0);
    const [first] = state.paths;
    expect(first!.hops[0]!.from).toBe('hub-p');
    expect(first!.hops.at(-1)!.to).toBe('sender3-p');
    expect(first!.hops.some((hop) => hop.type === 'transfer')).toBe(true);
    expect(await page.locator('[data-testid=paths] li.hop').count()).toBe(first!.length);
    await shot('08-paths.png');
    expect(pageErrors).toEqual([]);
  });

  it('dispositions the case with a reason and sees the audit entry', async () => {
    const { rows } = await world.api.db.pool.query<{ episode_id: string }>(`SELECT episode_id FROM alerts WHERE tenant_id = 'acme' AND detector_id = 'fan_in' AND subject_id = 'hub'`);
    await page.goto(`${base}/console/episodes/${encodeURIComponent(rows[0]!.episode_id)}`);
    await page.waitForSelector('form[aria-label=Disposition]');
    await shot('06-episode.png');
    const form = page.locator('form[aria-label=Disposition]');
    // A report (suspicious activity reported) needs a second user's approval: see the cases suite.
    await form.locator('select').selectOption('no_further_action');
    await form.locator('textarea').fill('Twelve new senders in three days, all known club members.');
    await form.locator('button').click();
    await expect.poll(() => page.textContent('[data-testid=disposition]'), { timeout: 10_000 }).toContain('no further action');
    await page.waitForSelector('[data-testid=audit]');
    expect(await page.textContent('[data-testid=audit]')).toMatch(/ana@example\.com[\s\S]*dispos/i);
    await shot('07-episode-disposed.png');
    expect(pageErrors).toEqual([]);
  });
});
