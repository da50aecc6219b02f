// Evidence an analyst can read and a network that answers questions, end to end in Debian's
// Chromium against the real console API: a planted fan-in raises a real alert on account `hub`;
// the alert shows its money formatted by the tenant's asset scale, its thresholds as a table and
// its movements and counterparties as links that open; the party page shows the name and type the
// API sends; the episode names the party behind its account alert; the network draws the two
// directions between two accounts as one line with count and total, shows labels on selection
// only, passes its time, edge-type and amount filters to the API, and centres a tapped node.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../../console/web/ensure-built.ts';
import { HEADLINE_EVIDENCE_ORDER } from '../../services/cases/store.ts';
import { formatMoney } from '../../services/detection/framework/money-text.ts';
import type { Evidence } from '../../services/detection/framework/detector.ts';
import { startDetectionWorld, type DetectionWorld } from '../support/detection-world.ts';
import { artifactPath, tapNode } from './chromium.ts';
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
let pageErrors: string[] = [];
let alertId: string;
let episodeId: string;
const shot = (name: string) => page.screenshot({ path: artifactPath(name), fullPage: true });

interface Summary {
  ready: boolean;
  center: string;
  focus: string | null;
  query: string;
  nodes: Array<{ id: string; kind: string }>;
  edges: Array<{ id: string; source: string; target: string; type: string; label: string; parts: string[]; count: number; total: string }>;
}
const summary = () => page.evaluate(() => (globalThis as ConsolePage).__svcNetwork as Summary);
const ready = () => page.waitForFunction(() => (globalThis as ConsolePage).__svcNetwork?.ready === true);

beforeAll(async () => {
  const [, w] = await Promise.all([ensureConsoleBuilt(), startDetectionWorld()]);
  world = w;
  await world.startDetection();
  await world.party('hub-p', { type: 'business', legal_names: ['Hub Holder Ltd', 'Hub Trading'] });
  await world.account('hub', 'hub-p');
  for (const id of ['onward', ...SENDERS]) {
    await world.party(`${id}-p`);
    await world.account(id, `${id}-p`);
  }
  // In turn: the test expects the headline hit to cite the first sender.
  await world.movementsInTurn(SENDERS.map((s, i) => ({ id: `fan-${i + 1}`, from: [s, `${s}-p`], to: ['hub', 'hub-p'], value: 3_000_000 + i * 15_055, at: before(70 - i * 3) })));
  // Money back to the first sender: the pair hub–sender1 has transfers both ways.
  await world.movement({ id: 'back-1', from: ['hub', 'hub-p'], to: ['sender1', 'sender1-p'], value: 12_345, at: before(30) });
  await world.movement({ id: 'fan-out', from: ['hub', 'hub-p'], to: ['onward', 'onward-p'], value: 30_000_000, at: before(2) });
  await world.settle();
  const { rows } = await world.api.db.pool.query<{ alert_id: string; episode_id: string }>(
    `SELECT alert_id, episode_id FROM alerts WHERE tenant_id = 'acme' AND detector_id = 'fan_in' AND subject_kind = 'account' AND subject_id = 'hub' AND mode = 'live'`,
  );
  alertId = `alrt_${rows[0]!.alert_id}`;
  episodeId = `epsd_${rows[0]!.episode_id}`;

  chromium = await openConsoleInChromium(world.api, { email: 'eve@example.com', role: 'analyst' });
  ({ base, page, pageErrors } = chromium);
  await page.goto(`${base}/console/login`);
  await page.fill('input[name=tenant]', 'acme');
  await page.fill('input[name=email]', 'eve@example.com');
  await page.fill('input[name=password]', chromium.oneTimePassword);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/console\/password/);
  await page.fill('input[name=current_password]', chromium.oneTimePassword);
  await page.fill('input[name=new_password]', NEW_PASSWORD);
  await page.fill('input[name=repeat]', NEW_PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL((url) => !url.pathname.endsWith('/password'));
}, 180_000);

afterAll(async () => {
  await chromium?.close();
  await world?.close();
});

describe('evidence and the network in Chromium (real console API)', () => {
  it('shows the alert total in major units of its asset, and the thresholds as observed / limit', async () => {
    const { rows } = await world.api.db.pool.query<{ evidence: Evidence }>(
      `SELECT e.evidence FROM alert_evidence e JOIN alerts a USING (tenant_id, alert_id) WHERE a.tenant_id = 'acme' AND a.alert_id = $1 ORDER BY ${HEADLINE_EVIDENCE_ORDER('e', 'a')} LIMIT 1`,
      [alertId.slice('alrt_'.length)],
    );
    const evidence = rows[0]!.evidence;
    await page.goto(`${base}/console/alerts/${alertId}`);
    await page.waitForSelector('[data-testid=evidence]');
    // The detector's own (ISO-only) formatter as the independent reference.
    const total = await page.textContent('[data-testid=evidence-total]');
    expect(total).toBe(formatMoney(evidence.amounts.total, evidence.amounts.asset));
    expect(total).toMatch(/^\d{1,3}(,\d{3})*\.\d{2} USD$/);
    // No amount anywhere in the evidence is left in minor units (a bare run of digits).
    expect(await page.textContent('[data-testid=evidence]')).not.toMatch(/(?<![\d,.])\d{6,}(?![\d,.])/);

    const rowsShown = await page.locator('[data-testid=thresholds] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(evidence.thresholds.length).toBeGreaterThan(0);
    expect(rowsShown).toEqual(
      evidence.thresholds.map((t: { name: string; observed: string | number; threshold: string | number }) => {
        const shown = (v: string | number) => (typeof v === 'string' && /^-?\d+$/.test(v) ? formatMoney(v, evidence.amounts.asset) : String(v));
        return [t.name.replaceAll('_', ' '), shown(t.observed), shown(t.threshold)];
      }),
    );
    expect(await page.locator('[data-testid=thresholds] thead th').allTextContents()).toEqual(['Threshold', 'Observed', 'Limit']);
    await shot('evidence-alert.png');
    expect(pageErrors).toEqual([]);
  });

  it('links the subject and counterparty accounts into the network, and opens a movement in its timeline', async () => {
    expect(await page.getAttribute('[data-testid=subject] a', 'href')).toBe('/console/network/hub-p?focus=account%3Ahub');
    expect(await page.getAttribute('nav.actions a:has-text("Network view")', 'href')).toBe('/console/network/hub-p?focus=account%3Ahub');
    const counterparty = page.locator('[data-testid=evidence-counterparties] a[data-account=sender1]');
    expect(await counterparty.getAttribute('href')).toBe('/console/network/hub-p?focus=account%3Asender1');
    const movement = page.locator('[data-testid=evidence-movements] a[data-movement=fan-1]');
    expect(await movement.getAttribute('href')).toMatch(/^\/console\/parties\/hub-p\?movement=fan-1&from=.+&to=.+$/);
    await movement.click();
    await page.waitForURL(/\/console\/parties\/hub-p\?movement=fan-1/);
    await page.waitForSelector('[data-testid=timeline] tr.focused[data-movement=fan-1]');
    // The row's money is formatted and its sides are links (the sender's party opens its page).
    const row = page.locator('tr[data-movement=fan-1]');
    expect(await row.locator('td.num').textContent()).toBe('30,000.00 USD');
    expect(await row.locator('a[data-party=sender1-p]').getAttribute('href')).toBe('/console/parties/sender1-p');
    expect(pageErrors).toEqual([]);
  });

  it('shows the party with the name and type the API sends', async () => {
    await page.goto(`${base}/console/parties/hub-p`);
    await page.waitForSelector('[data-testid=party-name]');
    expect(await page.textContent('[data-testid=party-name]')).toBe('Hub Holder Ltd; Hub Trading');
    expect(await page.textContent('[data-testid=party-type]')).toBe('business');
    expect(await page.textContent('h1')).toContain('Hub Holder Ltd');
    expect(await page.locator('[data-testid=accounts] a[data-account=hub]').count()).toBe(1);
    await shot('evidence-party.png');
    expect(pageErrors).toEqual([]);
  });

  it("names the party behind an episode whose alerts are on an account", async () => {
    await page.goto(`${base}/console/episodes/${episodeId}`);
    await page.waitForSelector('[data-testid=parties]');
    expect(await page.locator('[data-testid=parties] a[data-party=hub-p]').count()).toBe(1);
    expect(await page.textContent('[data-testid=parties]')).toContain('hub');
    await shot('evidence-episode.png');
    expect(pageErrors).toEqual([]);
  });

  it('draws the two directions between two accounts as one line with its count and total', async () => {
    await page.goto(`${base}/console/network/hub-p?depth=2`);
    await page.waitForSelector('#cy[data-ready=true]');
    await ready();
    const net = await summary();
    const pair = net.edges.filter((e) => [e.source, e.target].sort().join('|') === 'account:hub|account:sender1');
    expect(pair).toHaveLength(1);
    expect(pair[0]!.parts).toHaveLength(2);
    expect(pair[0]!.count).toBe(2);
    expect(pair[0]!.total).toBe('30,123.45 USD');
    expect(pair[0]!.label).toMatch(/^⇄ 2× 30,123\.45 USD\n/);
    // Every pair of nodes is drawn once.
    const pairs = net.edges.map((e) => [e.source, e.target].sort().join('|'));
    expect(new Set(pairs).size).toBe(pairs.length);
    // The subject's party is the centre and sits in the middle of the canvas.
    expect(net.center).toBe('party:hub-p');
    const offset = await page.evaluate(() => {
      const container = (globalThis as ConsolePage).document.getElementById('cy');
      const cy = container._cyreg.cy;
      const p = cy.getElementById('party:hub-p').renderedPosition();
      return Math.hypot(p.x - cy.width() / 2, p.y - cy.height() / 2);
    });
    expect(offset).toBeLessThan(40);
    // Labels only on hover or selection.
    const label = (select: boolean) =>
      page.evaluate(
        ([id, sel]) => {
          const cy = (globalThis as ConsolePage).document.getElementById('cy')._cyreg.cy;
          const edge = cy.getElementById(id);
          if (sel) edge.select();
          return edge.style('label') as string;
        },
        [pair[0]!.id, select] as const,
      );
    expect(await label(false)).toBe('');
    expect(await label(true)).toBe(pair[0]!.label);
    expect(await page.locator('[data-testid=legend] li').count()).toBeGreaterThan(4);
    await shot('evidence-network.png');
    expect(pageErrors).toEqual([]);
  });

  it('centres a tapped account, and keeps it in the URL', async () => {
    // Three hops: hub-p, its account hub, the senders' accounts, their parties.
    await page.goto(`${base}/console/network/hub-p?depth=3`);
    await ready();
    await tapNode(page, 'account:sender1');
    await page.click('.details button:has-text("Centre here")');
    await expect.poll(async () => (await summary()).focus).toBe('account:sender1');
    expect(page.url()).toContain('focus=account%3Asender1');
    const offset = await page.evaluate(() => {
      const container = (globalThis as ConsolePage).document.getElementById('cy');
      const cy = container._cyreg.cy;
      const n = cy.getElementById('account:sender1');
      const p = n.renderedPosition();
      return { d: Math.hypot(p.x - cy.width() / 2, p.y - cy.height() / 2), selected: n.selected() };
    });
    // Cytoscape centres the node with its label, a few pixels lower.
    expect(offset.d).toBeLessThan(20);
    expect(offset.selected).toBe(true);
    // A party's "Centre here" draws the network around it.
    await tapNode(page, 'party:sender1-p');
    await page.click('.details a:has-text("Centre here")');
    await page.waitForURL(/\/console\/network\/sender1-p\?depth=3&limit=200$/);
    await ready();
    expect((await summary()).center).toBe('party:sender1-p');
    expect(pageErrors).toEqual([]);
  });

  it('passes the amount, edge-type and time filters to the API and draws what it answers', async () => {
    await page.goto(`${base}/console/network/hub-p?depth=2`);
    await ready();
    const all = await summary();
    expect(all.edges.some((e) => e.type === 'holds')).toBe(true);
    // Transfers of at least 100,000.00 USD (the senders paid about 30,000 USD each) and holds, the
    // edges a party reaches its accounts by.
    const form = page.locator('form[aria-label="network options"]');
    await form.locator('input[name=min_amount]').fill('100,000.00');
    await form.locator('input[value=transfer]').check();
    await form.locator('input[value=holds]').check();
    await form.locator('button[type=submit]').click();
    await page.waitForURL(/min_amount=10000000/);
    await ready();
    const filtered = await summary();
    expect(filtered.query).toBe('depth=2&limit=200&edge_types=transfer%2Cholds&min_amount=10000000');
    expect(filtered.edges.filter((e) => e.type === 'transfer').map((e) => [e.source, e.target, e.count])).toEqual([['account:hub', 'account:onward', 1]]);
    expect(new Set(filtered.edges.map((e) => e.type))).toEqual(new Set(['transfer', 'holds']));
    expect(await page.textContent('[data-testid=net-summary]')).toContain('movements of at least 100,000.00 USD');
    // The form shows the filter as it was given.
    expect(await form.locator('input[name=min_amount]').inputValue()).toBe('100,000.00');
    // A time window without the amount: only the day of the fan-out.
    await form.locator('input[name=min_amount]').fill('');
    await form.locator('input[name=since]').fill('2026-09-01');
    await form.locator('input[name=until]').fill('2026-09-01');
    await form.locator('button[type=submit]').click();
    await page.waitForURL(/since=2026-09-01T00%3A00%3A00.000Z&until=2026-09-01T23%3A59%3A59.999Z/);
    await ready();
    const windowed = await summary();
    expect(windowed.edges.filter((e) => e.type === 'transfer').map((e) => [e.source, e.target])).toEqual([['account:hub', 'account:onward']]);
    // An amount that is not one is refused in the page, before any request.
    await form.locator('input[name=min_amount]').fill('12.345');
    await form.locator('button[type=submit]').click();
    await expect.poll(() => form.locator('[role=alert]').textContent()).toContain('at most 2 decimals');
    await shot('evidence-network-filtered.png');
    expect(pageErrors).toEqual([]);
  });
});

