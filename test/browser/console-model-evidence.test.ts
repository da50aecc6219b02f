// A learned-model alert's explanation in Chromium, against the stubbed console API
// (test/browser/fixtures.ts): the model, its version, score against threshold and the features
// that weighed most with the subject's own baseline, rendered like every other evidence (money
// by the tenant's asset scale, thresholds as observed / limit, ids as links).
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertDetail, Evidence } from '../../console/web/src/payloads.ts';
import { artifactPath, launchChromium } from './chromium.ts';
import { ALERTS, stubConsoleApi } from './fixtures.ts';
import { serveBuiltConsole } from './serve-built.ts';

// As services/detection/models/detector.ts hitOf writes it.
const MODEL_EVIDENCE: Evidence = {
  movements: ['m-7', 'm-9'],
  counterparties: ['account:acct-x', 'party:px'],
  amounts: { total: '123456789', count: 2, asset: 'USD', in: '123456789', out: '0' },
  window: { from: '2026-08-18T00:00:00.000Z', to: '2026-09-01T09:00:00.000Z' },
  thresholds: [{ name: 'model_score', threshold: 0.5, observed: 0.734 }],
  facts: {
    model: { id: 'mdl_acme_1', version: 3, format: 'logreg-v1', trained_at: '2026-08-15T00:00:00.000Z' },
    score: 0.734,
    threshold: 0.5,
    top_features: [
      { feature: 'in_sum_14d', meaning: 'money received in 14 days', value: '1,234,567.89 USD', own_baseline: '2,000.00 USD', contribution: 1.82 },
      { feature: 'new_counterparties_14d', meaning: 'new counterparties in 14 days', value: '9', own_baseline: '1', contribution: 0.94 },
    ],
  },
};
const MODEL_ALERT: AlertDetail = {
  ...ALERTS[1]!,
  alert_id: 'alert-model',
  detector: 'learned_model',
  typology: 'learned',
  subject: { kind: 'account', external_id: 'acct-m' },
  party_id: 'pm',
  evidence: MODEL_EVIDENCE as unknown as Record<string, unknown>,
  evidence_history: [],
};

let server: { app: FastifyInstance; base: string };
let browser: Browser;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  server = await serveBuiltConsole();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
  await stubConsoleApi(page);
  // Registered after the stub, so it answers first.
  await page.route(/\/console\/v1\/alerts\/alert-model$/, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(MODEL_ALERT) }));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

describe('a learned-model alert in the console', () => {
  it('shows the model, its score against its threshold, and the features with the baseline', async () => {
    await page.goto(`${server.base}/console/alerts/alert-model`);
    await page.waitForSelector('[data-testid=model]');
    const model = await page.textContent('[data-testid=model]');
    expect(model).toContain('mdl_acme_1 v3');
    expect(model).toContain('0.734 / 0.5');
    const rows = await page.locator('[data-testid=features] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toEqual([
      ['money received in 14 days', '1,234,567.89 USD', '2,000.00 USD', '1.82'],
      ['new counterparties in 14 days', '9', '1', '0.94'],
    ]);
    expect(await page.locator('[data-testid=features] thead th').allTextContents()).toEqual(['Feature', 'Value', "Subject's baseline", 'Weight']);
    // The rest of the evidence as everywhere: money formatted, the score as a threshold row, links.
    expect(await page.textContent('[data-testid=evidence-total]')).toBe('1,234,567.89 USD');
    expect(await page.locator('[data-testid=thresholds] tbody tr td').allTextContents()).toEqual(['model score', '0.734', '0.5']);
    expect(await page.getAttribute('[data-testid=evidence-counterparties] a[data-account=acct-x]', 'href')).toBe('/console/network/pm?focus=account%3Aacct-x');
    expect(await page.getAttribute('[data-testid=evidence-counterparties] a[data-party=px]', 'href')).toBe('/console/parties/px');
    expect(await page.getAttribute('[data-testid=evidence-movements] a[data-movement=m-7]', 'href')).toBe(
      `/console/parties/pm?movement=m-7&from=${encodeURIComponent(MODEL_EVIDENCE.window.from)}&to=${encodeURIComponent(MODEL_EVIDENCE.window.to)}`,
    );
    // The model's own facts are not repeated as "other facts".
    expect(await page.locator('[data-testid=evidence-facts]').count()).toBe(0);
    await page.screenshot({ path: artifactPath('evidence-model.png'), fullPage: true });
    expect(errors).toEqual([]);
  });
});
