// Reconciliation breaks in the console, end to end in Chromium: a declaration that does not match
// what the service holds opens a break; an operator logs in, finds it in the breaks queue, sees
// the reconciliation and every difference item, acknowledges it with a note, comments, resolves
// it, and the service records who did each and when (and audits it). Screenshots go to
// test-artifacts/console/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../../console/web/ensure-built.ts';
import { accountEvent, movementEvent, partyEvent } from '../fixtures/events.ts';
import { startTestApi, type TestApi } from '../support/test-api.ts';
import { startTestPipeline, type TestPipeline } from '../support/test-pipeline.ts';
import { artifactPath } from './chromium.ts';
import { openConsoleInChromium, type ConsoleInChromium } from './console-in-chromium.ts';

const NEW_PASSWORD = 'a long enough new password';
let api: TestApi;
let pipeline: TestPipeline;
let chromium: ConsoleInChromium | undefined;
let base: string;
let page: Page;
let oneTimePassword: string;
let reconciliationId: string;
let pageErrors: string[] = [];
const shot = (name: string) => page.screenshot({ path: artifactPath(name), fullPage: true });

beforeAll(async () => {
  const [, started] = await Promise.all([ensureConsoleBuilt(), startTestApi()]);
  api = started;
  pipeline = await startTestPipeline(api);
  for (const [path, event] of [
    ['/v1/parties', partyEvent('party-1')],
    ['/v1/parties', partyEvent('party-2')],
    ['/v1/accounts', accountEvent('acct-1', 'party-1')],
    ['/v1/accounts', accountEvent('acct-2', 'party-2')],
  ] as const) {
    expect((await api.client.post(path, event, api.keys.ingest)).statusCode).toBe(202);
  }
  for (const [id, status] of [['mv-1', 'completed'], ['mv-2', 'failed']] as const) {
    const event = movementEvent(id);
    event.occurred_at = '2026-08-10T10:00:00Z';
    event.data.status = status;
    delete (event.data as Record<string, unknown>).fees;
    expect((await api.client.post('/v1/movements', event, api.keys.ingest)).statusCode).toBe(202);
  }
  await pipeline.drain();
  // The customer counted the failed movement too: 2 where the ledger has 1.
  const declared = await api.client.post(
    '/v1/reconciliations',
    { scope: { kind: 'account', external_id: 'acct-1' }, direction: 'out', asset: 'USD', period: { from: '2026-08-10T00:00:00Z', to: '2026-08-11T00:00:00Z' }, declared: { count: 2, sum: { value: '25100', asset: 'USD', scale: 2 } } },
    api.keys.ingest,
  );
  expect(declared.json().status).toBe('mismatched');
  reconciliationId = declared.json().reconciliation_id;

  chromium = await openConsoleInChromium(api, { email: 'ops@example.com', role: 'analyst' });
  ({ base, oneTimePassword, page, pageErrors } = chromium);
}, 180_000);

afterAll(async () => {
  await chromium?.close();
  await pipeline?.stop();
  await api?.close();
});

describe('reconciliation breaks in the console', () => {
  it('logs in and finds the open break in the queue', async () => {
    await page.goto(`${base}/console/breaks`);
    await page.waitForURL(/\/console\/login/);
    await page.fill('input[name=tenant]', 'acme');
    await page.fill('input[name=email]', 'ops@example.com');
    await page.fill('input[name=password]', oneTimePassword);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/console\/password/);
    await page.fill('input[name=current_password]', oneTimePassword);
    await page.fill('input[name=new_password]', NEW_PASSWORD);
    await page.fill('input[name=repeat]', NEW_PASSWORD);
    await page.click('button[type=submit]');
    // Back where the login started: the breaks queue, also one click away in the header.
    await page.waitForURL(/\/console\/breaks$/);
    await page.waitForSelector('tr[data-break-id]');
    expect(await page.locator('nav.bar a[href="/console/breaks"]').count()).toBe(1);
    expect(await page.locator('tr[data-break-id]').count()).toBe(1);
    expect(await page.textContent('tr[data-break-id]')).toContain('-125.50 USD');
    await shot('breaks-queue.png');
    expect(pageErrors).toEqual([]);
  });

  it('shows the reconciliation and its difference items, and works the break to resolution', async () => {
    await page.click('tr[data-break-id] a');
    await page.waitForURL(/\/console\/breaks\/rbk_/);
    await page.waitForSelector('table[aria-label="difference items"]');
    expect(await page.textContent('table[aria-label="difference items"]')).toContain('status not counted');
    expect(await page.textContent('dl.facts')).toContain('251.00 USD');
    const csv = await page.request.get(`${base}/console/v1/reconciliations/${reconciliationId}/items?format=csv`);
    expect((await csv.text()).split('\r\n')[1]).toMatch(/^movement,status_not_counted,mv-2,/);
    await shot('break-open.png');

    await page.locator('form[aria-label=Acknowledge] textarea').fill('the customer counted a failed payment');
    await page.locator('form[aria-label=Acknowledge] button').click();
    await expect.poll(() => page.textContent('h1')).toContain('acknowledged');
    await page.locator('form[aria-label=Resolve] button').click();
    await page.waitForSelector('text=give a resolution');
    await page.locator('form[aria-label=Resolve] textarea').fill('customer re-declares without failed movements');
    await page.locator('form[aria-label=Resolve] button').click();
    await expect.poll(() => page.textContent('h1')).toContain('resolved');
    expect(await page.textContent('ol.comments')).toContain('console:ops@example.com');
    await shot('break-resolved.png');

    const { rows } = await api.db.pool.query(`SELECT state, acknowledged_by, resolved_by, resolution FROM reconciliation_breaks`);
    expect(rows).toEqual([{ state: 'resolved', acknowledged_by: 'console:ops@example.com', resolved_by: 'console:ops@example.com', resolution: 'customer re-declares without failed movements' }]);
    const audit = await api.db.pool.query(`SELECT action FROM console_audit WHERE action LIKE 'reconciliation%' ORDER BY audit_id`);
    expect(audit.rows.map((r) => r.action)).toEqual(['reconciliation.items_exported', 'reconciliation_break.acknowledged', 'reconciliation_break.resolved']);
    expect(pageErrors).toEqual([]);
  });
});
