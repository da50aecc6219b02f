// The case inbox and the case page end to end in Debian's Chromium, on real cases: three fan-ins
// (twelve new senders paying a hub account, then money moving on) go through the API and the
// pipelines to three real episodes; the first is planted eight days before the others, so it is
// past its due date when the analysts look. An analyst lands on the inbox, filters and sorts it,
// takes a case from the unassigned view, opens it, reads its timeline (the alert's movements
// highlighted), adds a note and proposes a report; a supervisor assigns several cases at once and
// approves the report; a supervisor who proposed one cannot approve it, a third one rejects it;
// the goAML and case-file exports answer. Screenshots: test-artifacts/console/cases-*.png.
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../../console/web/ensure-built.ts';
import { ID_PREFIXES } from '../../platform/ids.ts';
import { putReportingEntity, reportingEntitySchema } from '../../services/console/case-exports/reporting-entity.ts';
import { saveCaseSla } from '../../services/console/queries/case-sla.ts';
import { revokeUserSessions } from '../../services/console/store.ts';
import { createConsoleUser } from '../../services/console/users.ts';
import { startDetectionWorld, type DetectionWorld } from '../support/detection-world.ts';
import { artifactPath } from './chromium.ts';
import { openConsoleInChromium, type ConsoleInChromium } from './console-in-chromium.ts';
import type { ConsolePage } from './page-globals.ts';

const HOUR = 3_600_000;
const NEW_PASSWORD = 'a long enough new password';
// hub a: the oldest case; hub c: the largest amount (senders pay three times as much).
const HUBS = { a: 30_000, b: 31_000, c: 90_000 } as const;
type Hub = keyof typeof HUBS;

let world: DetectionWorld;
let chromium: ConsoleInChromium | undefined;
let base: string;
let ana: Page;
const contexts: BrowserContext[] = [];
const errors: string[] = [];
const caseOf = {} as Record<Hub, string>;
// The machine is shared: a drawing may take longer than expect.poll's default second.
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 10_000 });
const shot = (page: Page, name: string) => page.screenshot({ path: artifactPath(`cases-${name}.png`), fullPage: true });

async function plantFanIn(hub: Hub): Promise<void> {
  const now = world.api.clock.now().getTime();
  const before = (hours: number) => new Date(now - hours * HOUR).toISOString();
  const senders = Array.from({ length: 12 }, (_, i) => `${hub}-sender${i + 1}`);
  for (const id of [`hub-${hub}`, `onward-${hub}`, ...senders]) {
    await world.party(`${id}-p`);
    await world.account(id, `${id}-p`);
  }
  // In turn: the test expects the alert to cite all twelve.
  await world.movementsInTurn(senders.map((s, i) => ({ id: `${hub}-fan-${i + 1}`, from: [s, `${s}-p`], to: [`hub-${hub}`, `hub-${hub}-p`], value: HUBS[hub] + i * 150, at: before(70 - i * 3) })));
  await world.movement({ id: `${hub}-fan-out`, from: [`hub-${hub}`, `hub-${hub}-p`], to: [`onward-${hub}`, `onward-${hub}-p`], value: HUBS[hub] * 10, at: before(2) });
  await world.settle();
}

// A user created as the operator would, logged in through the UI in a browser context of their own
// (the one-time password changed first); lands on the inbox.
async function logIn(page: Page, email: string, oneTimePassword: string): Promise<void> {
  page.on('pageerror', (error) => errors.push(`${email}: ${error.message}`));
  page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(`${email}: ${m.text()}`));
  await page.goto(`${base}/console/login`);
  await page.fill('input[name=tenant]', 'acme');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', oneTimePassword);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/console\/password/);
  await page.fill('input[name=current_password]', oneTimePassword);
  await page.fill('input[name=new_password]', NEW_PASSWORD);
  await page.fill('input[name=repeat]', NEW_PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/console\/cases$/);
}

async function supervisor(email: string): Promise<Page> {
  const created = await createConsoleUser(world.api.db.pool, { tenantId: 'acme', email, role: 'supervisor' }, world.api.clock.now());
  if (created.kind !== 'created') throw new Error(created.kind);
  const context = await ana.context().browser()!.newContext({ viewport: { width: 1280, height: 860 } });
  contexts.push(context);
  const page = await context.newPage();
  await logIn(page, email, created.password);
  return page;
}

const rowIds = (page: Page) => page.locator('tr[data-case-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-case-id')!));
const row = (page: Page, hub: Hub) => page.locator(`tr[data-case-id="${caseOf[hub]}"]`);
const inbox = async (page: Page, query = '') => {
  await page.goto(`${base}/console/cases${query}`);
  await page.waitForSelector('section[aria-label=cases] table, section[aria-label=cases] .state.empty');
};

beforeAll(async () => {
  const [, w] = await Promise.all([ensureConsoleBuilt(), startDetectionWorld()]);
  world = w;
  // Seven days for every priority, so that which case is overdue does not hang on the severity
  // detection gives each fan-in.
  const operator = await createConsoleUser(world.api.db.pool, { tenantId: 'acme', email: 'sla@example.com', role: 'supervisor' }, world.api.clock.now());
  if (operator.kind !== 'created') throw new Error(operator.kind);
  await saveCaseSla(world.api.db.pool, 'acme', { critical: 168, high: 168, medium: 168, low: 168 }, operator.user.user_id, world.api.clock.now());
  await world.startDetection();
  await plantFanIn('a');
  // Eight days later (past the SLA of seven days), the two others.
  world.api.clock.advance(8 * 24 * 3600);
  await plantFanIn('b');
  // An hour apart, so the inbox's order by age is b before c.
  world.api.clock.advance(3600);
  await plantFanIn('c');
  for (const hub of Object.keys(HUBS) as Hub[]) {
    const { rows } = await world.api.db.pool.query<{ episode_id: string }>(
      `SELECT DISTINCT episode_id FROM alerts WHERE tenant_id = 'acme' AND detector_id = 'fan_in' AND subject_kind = 'account' AND subject_id = $1`,
      [`hub-${hub}`],
    );
    expect(rows).toHaveLength(1);
    caseOf[hub] = ID_PREFIXES.episode + rows[0]!.episode_id;
  }
  // The tenant's goAML reporting entity, as the operator sets it up (the goAML export needs one).
  const saved = await putReportingEntity(
    world.api.db.pool,
    'acme',
    reportingEntitySchema.parse({
      rentity_id: 1234,
      rentity_branch: 'Head office',
      institution_name: 'Acme Bank',
      institution_code: 'ACMEGB2L',
      country_code: 'GB',
      reporting_person: { first_name: 'Rita', last_name: 'Reporter' },
      location: { type: 'B', address: '1 Main Street', city: 'London' },
    }),
    world.api.clock.now(),
  );
  expect(saved.kind).toBe('saved');
  chromium = await openConsoleInChromium(world.api, { email: 'ana@example.com', role: 'analyst' });
  ({ base, page: ana } = chromium);
  await logIn(ana, 'ana@example.com', chromium.oneTimePassword);
}, 180_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await chromium?.close();
  await world?.close();
});

describe('the case inbox and the case page in Chromium', () => {
  it('lands the analyst on the inbox, with the overdue case marked', async () => {
    expect(await ana.locator('nav[aria-label=main] a', { hasText: 'Cases' }).count()).toBe(1);
    await ana.waitForSelector('tr[data-case-id]');
    const ids = await rowIds(ana);
    for (const hub of Object.keys(HUBS) as Hub[]) expect(ids).toContain(caseOf[hub]);
    // The default sort is by age: the oldest case first.
    expect(ids[0]).toBe(caseOf.a);
    expect(await row(ana, 'a').locator('[data-testid=overdue]').count()).toBe(1);
    expect(await row(ana, 'b').locator('[data-testid=overdue]').count()).toBe(0);
    // Money in the base asset, by its scale: c's senders paid 12 × 90,000.00 and more.
    expect(await row(ana, 'c').locator('[data-testid=amount]').textContent()).toMatch(/^\d{1,3}(,\d{3})*\.\d{2} USD$/);
    expect(await row(ana, 'a').locator('[data-testid=assignee]').textContent()).toBe('unassigned');
    await shot(ana, '01-inbox');
    expect(errors).toEqual([]);
  });

  it('filters and sorts through the form, in the URL', async () => {
    await ana.selectOption('select[name=sort]', 'amount');
    await ana.click('form.filters button[type=submit]');
    await ana.waitForURL(/sort=amount/);
    await poll(async () => (await rowIds(ana))[0]).toBe(caseOf.c);
    const byAmount = await rowIds(ana);
    expect(byAmount.indexOf(caseOf.c)).toBeLessThan(byAmount.indexOf(caseOf.a));

    await ana.check('input[name=overdue]');
    await ana.click('form.filters button[type=submit]');
    await ana.waitForURL(/overdue=true/);
    await poll(() => rowIds(ana)).toEqual([caseOf.a]);

    await inbox(ana, '?typology=no-such-typology');
    expect(await ana.textContent('section[aria-label=cases]')).toContain('No case matches these filters.');
    // A reload keeps the filters (they are the URL).
    await ana.reload();
    await ana.waitForSelector('section[aria-label=cases] .state.empty');
    expect(await ana.inputValue('input[name=typology]')).toBe('no-such-typology');
    expect(errors).toEqual([]);
  });

  it('pages by cursor', async () => {
    await inbox(ana, '?limit=2');
    const first = await rowIds(ana);
    expect(first).toHaveLength(2);
    expect(first[0]).toBe(caseOf.a);
    await ana.click('nav.pager a[rel=next]');
    await ana.waitForURL(/cursor=/);
    await poll(async () => (await rowIds(ana)).length).toBe(1);
    expect(new Set([...first, ...(await rowIds(ana))])).toEqual(new Set(Object.values(caseOf)));
    expect(await ana.locator('nav.pager a[rel=next]').count()).toBe(0);
    await ana.click('nav.pager a:has-text("First page")');
    await poll(() => rowIds(ana)).toEqual(first);
    expect(errors).toEqual([]);
  });

  it('offers "My cases" and "Unassigned", and lets the analyst take a case', async () => {
    await inbox(ana);
    await ana.click('[data-testid=quick-mine]');
    await ana.waitForURL(/assignee=me/);
    await ana.waitForSelector('section[aria-label=cases] .state.empty');
    expect(await ana.getAttribute('[data-testid=quick-mine]', 'aria-current')).toBe('page');

    await ana.click('[data-testid=quick-unassigned]');
    await ana.waitForURL(/assignee=unassigned/);
    await ana.waitForSelector(`tr[data-case-id="${caseOf.b}"]`);
    await row(ana, 'b').locator('[data-testid=take]').click();
    // Taken: gone from the unassigned view, in "My cases" with the analyst as assignee.
    await poll(() => rowIds(ana)).not.toContain(caseOf.b);
    await ana.click('[data-testid=quick-mine]');
    await poll(() => rowIds(ana)).toEqual([caseOf.b]);
    expect(await row(ana, 'b').locator('[data-testid=assignee]').textContent()).toBe('ana@example.com');
    // An analyst has no bulk assignment.
    expect(await ana.locator('form.bulk-assign').count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('opens the case: header, subjects, the timeline with the alert\'s movements highlighted', async () => {
    // From the keyboard, as in the alert queue: the first row is selected, Enter opens it.
    expect(await row(ana, 'b').getAttribute('aria-selected')).toBe('true');
    await ana.keyboard.press('Enter');
    await ana.waitForURL(new RegExp(`/console/cases/${caseOf.b}$`));
    await ana.waitForSelector('[data-testid=timeline]');
    expect(await ana.textContent('[data-testid=assignee]')).toBe('ana@example.com');
    expect(await ana.textContent('[data-testid=amount]')).toMatch(/\d\.\d{2} USD$/);
    expect(await ana.locator('[data-testid=subjects] a[href="/console/parties/hub-b-p"]').count()).toBe(1);
    const cited = await ana.locator('tr[data-movement-id][data-cited=true]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-movement-id')!));
    expect(cited).toEqual(expect.arrayContaining(['b-fan-1', 'b-fan-12']));
    const toggle = ana.locator('tr[data-alert-id] button[aria-pressed]').first();
    await toggle.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    expect(await ana.locator('tr[data-movement-id].focus').count()).toBeGreaterThanOrEqual(12);
    await toggle.click();
    expect(await ana.locator('tr[data-movement-id].focus').count()).toBe(0);
    await shot(ana, '02-case');
    // The subject's network, centred on the alerted account.
    await ana.click('[data-testid=subjects] [data-testid=network-link]');
    await ana.waitForSelector('#cy[data-ready=true]');
    expect(await ana.evaluate(() => (globalThis as ConsolePage).__svcNetwork?.focus)).toBe('account:hub-b');
    expect(await ana.evaluate(() => (globalThis as ConsolePage).__svcNetwork?.cited)).toEqual([]);
    await ana.goBack();
    await ana.waitForSelector('[data-testid=timeline]');
    // And the network of the period the cited movements span (b-fan-1 … b-fan-out).
    await ana.click('[data-testid=subjects] [data-testid=network-window-link]');
    await ana.waitForSelector('#cy[data-ready=true]');
    const net = await ana.evaluate(() => (globalThis as ConsolePage).__svcNetwork as { focus: string; query: string; nodes: Array<{ id: string }> });
    expect(net.focus).toBe('account:hub-b');
    const window = new URLSearchParams(net.query);
    expect(Date.parse(window.get('since')!)).toBeLessThan(Date.parse(window.get('until')!));
    expect(net.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(['account:hub-b', 'account:b-sender1', 'account:onward-b']));
    // The lines carrying the alerts' cited movements are marked, and the legend says so.
    const marked = await ana.evaluate(() => (globalThis as ConsolePage).__svcNetwork!.cited as string[]);
    expect(marked).toEqual(expect.arrayContaining(['pair:account:b-sender1|account:hub-b']));
    expect(await ana.textContent('[data-testid=legend]')).toContain("case's alerts cite");
    await ana.goBack();
    await ana.waitForSelector('[data-testid=timeline]');
    expect(errors).toEqual([]);
  });

  it('adds a note, kept after a reload, with its author and no way to edit it', async () => {
    const body = 'Called the bank: the hub account was opened two weeks ago.\nAwaiting KYC documents.';
    await ana.fill('form[aria-label="add a note"] textarea', body);
    await ana.click('form[aria-label="add a note"] button[type=submit]');
    await poll(() => ana.locator('[data-testid=notes] li').count()).toBe(1);
    await ana.reload();
    await ana.waitForSelector('[data-testid=notes] li');
    const note = ana.locator('[data-testid=notes] li').first();
    expect(await note.locator('.note-body').textContent()).toBe(body);
    expect(await note.textContent()).toContain('ana@example.com');
    expect(await note.locator('button, [contenteditable]').count()).toBe(0);
    // An empty note is refused in the page, before the API.
    await ana.click('form[aria-label="add a note"] button[type=submit]');
    expect(await ana.textContent('form[aria-label="add a note"] [role=alert]')).toContain('write something');
    expect(errors).toEqual([]);
  });

  it('keeps a note being written when the session ends under it, and says so at the login', async () => {
    const url = ana.url();
    const body = 'Typed while the session ended elsewhere.';
    const { rows } = await world.api.db.pool.query<{ user_id: string }>(`SELECT user_id FROM console_users WHERE tenant_id = 'acme' AND email = 'ana@example.com'`);
    await revokeUserSessions(world.api.db.pool, rows[0]!.user_id, world.api.clock.now());
    await ana.fill('form[aria-label="add a note"] textarea', body);
    await ana.click('form[aria-label="add a note"] button[type=submit]');
    await ana.waitForURL(/\/console\/login\?/);
    expect(await ana.textContent('[role=status]')).toContain('what you were writing is kept');
    await ana.fill('input[name=tenant]', 'acme');
    await ana.fill('input[name=email]', 'ana@example.com');
    await ana.fill('input[name=password]', NEW_PASSWORD);
    await ana.click('button[type=submit]');
    await ana.waitForURL(url);
    await poll(() => ana.inputValue('form[aria-label="add a note"] textarea')).toBe(body);
    await ana.click('form[aria-label="add a note"] button[type=submit]');
    await poll(() => ana.locator('[data-testid=notes] li').count()).toBe(2);
    // A first visit without any session is sent to the login without that notice.
    const fresh = await ana.context().browser()!.newContext();
    contexts.push(fresh);
    const visitor = await fresh.newPage();
    await visitor.goto(`${base}/console/cases`);
    await visitor.waitForURL(/\/console\/login\?next=%2Fconsole%2Fcases$/);
    expect(await visitor.locator('[role=status]').count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('proposes a report; the proposer sees no approval', async () => {
    await ana.fill('form[aria-label="propose a report"] textarea', 'Twelve new senders in three days, the money moved on at once.');
    await ana.click('form[aria-label="propose a report"] button[type=submit]');
    await poll(() => ana.textContent('[data-testid=report-state]')).toBe('pending');
    expect(await ana.locator('[data-testid=report-waiting]').count()).toBe(1);
    expect(await ana.locator('button[value=approve]').count()).toBe(0);
    expect(await ana.textContent('[data-testid=case-status]')).toContain('report awaiting approval');
    await shot(ana, '03-proposed');
    expect(errors).toEqual([]);
  });

  let sue: Page;
  it('a supervisor assigns several cases at once', async () => {
    // An analyst who holds no case yet: the picker offers every active user of the tenant.
    await createConsoleUser(world.api.db.pool, { tenantId: 'acme', email: 'ivy@example.com', role: 'analyst' }, world.api.clock.now());
    sue = await supervisor('sue@example.com');
    await sue.waitForSelector('form.bulk-assign');
    await sue.waitForSelector('form.bulk-assign select option:has-text("ivy@example.com")', { state: 'attached' });
    // a is the first row (oldest), c the third: x ticks the selected row, j moves down.
    expect(await rowIds(sue)).toEqual([caseOf.a, caseOf.b, caseOf.c]);
    await sue.keyboard.press('x');
    await sue.keyboard.press('j');
    await sue.keyboard.press('j');
    await sue.keyboard.press('x');
    expect(await sue.locator('tbody input[name=case]:checked').evaluateAll((boxes) => boxes.map((b) => b.getAttribute('value')))).toEqual([caseOf.a, caseOf.c]);
    const ana_id = await sue.locator('form.bulk-assign select option', { hasText: 'ana@example.com' }).getAttribute('value');
    await sue.selectOption('form.bulk-assign select', ana_id);
    await sue.click('form.bulk-assign button[type=submit]');
    await poll(() => sue.textContent('[data-testid=assign-status]')).toContain('2 assigned');
    for (const hub of ['a', 'c'] as const) expect(await row(sue, hub).locator('[data-testid=assignee]').textContent()).toBe('ana@example.com');
    await shot(sue, '04-assigned');
    await inbox(ana, '?assignee=me');
    expect((await rowIds(ana)).sort()).toEqual([caseOf.a, caseOf.b, caseOf.c].sort());
    expect(errors).toEqual([]);
  });

  it('a second supervisor approves the report: the case is reported and closed', async () => {
    await sue.click('[data-testid=quick-approval]');
    await sue.waitForSelector(`tr[data-case-id="${caseOf.b}"]`);
    expect(await rowIds(sue)).toEqual([caseOf.b]);
    await row(sue, 'b').locator('th a').click();
    await sue.waitForSelector('form[aria-label="decide the report"]');
    expect(await sue.textContent('[data-testid=narrative]')).toContain('Twelve new senders');
    await sue.fill('form[aria-label="decide the report"] textarea', 'Pattern confirmed against the bank statements.');
    await sue.click('button[value=approve]');
    await poll(() => sue.textContent('[data-testid=report-state]')).toBe('approved');
    expect(await sue.textContent('[data-testid=disposition]')).toBe('suspicious activity reported');
    expect(await sue.textContent('[data-testid=case-status]')).toContain('closed');
    // Both steps are in the case's timeline, with who did them.
    await sue.check('input[name=show_views]');
    const actions = await sue.locator('tr.tl-audit').evaluateAll((rows) => rows.map((r) => r.textContent ?? ''));
    expect(actions.some((a) => /propos/i.test(a) && a.includes('ana@example.com'))).toBe(true);
    expect(actions.some((a) => /approv/i.test(a) && a.includes('sue@example.com'))).toBe(true);
    await shot(sue, '05-approved');
    expect(errors).toEqual([]);
  });

  it('a supervisor who proposed cannot approve; a third one rejects', async () => {
    await sue.goto(`${base}/console/cases/${caseOf.c}`);
    await sue.fill('form[aria-label="propose a report"] textarea', 'Large fan-in onto a new account.');
    await sue.click('form[aria-label="propose a report"] button[type=submit]');
    await poll(() => sue.textContent('[data-testid=report-state]')).toBe('pending');
    expect(await sue.locator('button[value=approve]').count()).toBe(0);
    // Nor through the API: the server refuses the proposer's own approval.
    const refused = await sue.evaluate(async (id) => {
      const session = (await (await fetch('/console/v1/session')).json()) as { csrf_token: string };
      const res = await fetch(`/console/v1/cases/${id}/report/decision`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token },
        body: JSON.stringify({ decision: 'approve', reason: 'my own' }),
      });
      return { status: res.status, body: await res.json() };
    }, caseOf.c);
    expect([403, 409]).toContain(refused.status);

    const sam = await supervisor('sam@example.com');
    await sam.goto(`${base}/console/cases/${caseOf.c}`);
    await sam.waitForSelector('form[aria-label="decide the report"]');
    await sam.fill('form[aria-label="decide the report"] textarea', 'The senders are payroll: not suspicious.');
    await sam.click('button[value=reject]');
    await poll(() => sam.textContent('[data-testid=report-state]')).toBe('rejected');
    // Rejected: the case stays open and a report can be proposed again.
    expect(await sam.textContent('[data-testid=case-status]')).not.toContain('closed');
    expect(await sam.locator('form[aria-label="propose a report"]').count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('links the goAML report and the printable case file, and both answer', async () => {
    await ana.goto(`${base}/console/cases/${caseOf.b}`);
    await ana.waitForSelector('[data-testid=goaml-link]');
    const xml = await ana.request.get(`${base}${await ana.getAttribute('[data-testid=goaml-link]', 'href')}`);
    expect(xml.status()).toBe(200);
    expect(xml.headers()['content-type']).toMatch(/xml/);
    expect(await xml.text()).toContain('<report');
    const file = await ana.request.get(`${base}${await ana.getAttribute('[data-testid=case-file-link]', 'href')}`);
    expect(file.status()).toBe(200);
    expect(file.headers()['content-type']).toMatch(/text\/html/);
    expect(errors).toEqual([]);
  });
});
