import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startDetectionWorld, type DetectionWorld } from '../../../test/support/detection-world.ts';
import { defineDetector, noHit, type DetectorOutcome } from '../framework/detector.ts';
import { aboveZero } from '../framework/parameter-rules.ts';
import { alertsOpened, backtest, type BacktestDeps, type WindowedHit } from './backtest.ts';
import { activate, createCandidate } from './lifecycle.ts';
import { sweepOutbox } from '../../../services/webhooks/declared-payloads.test-kit.ts';

describe('alertsOpened (the alert rule of alerts.ts)', () => {
  const hit = (detectorId: string, subject: string, from: number, to: number): WindowedHit => ({ detectorId, subject, from, to });

  it('opens one alert per detector, subject and overlapping window', () => {
    const opened = alertsOpened([
      hit('d1', 'account:a', 0, 10),
      // Overlaps: extends the alert to [0, 20].
      hit('d1', 'account:a', 5, 20),
      // Overlaps only the extended window.
      hit('d1', 'account:a', 15, 30),
      // Touching the end counts as overlapping (windows are inclusive, as in recordHits).
      hit('d1', 'account:a', 30, 40),
      // Past the alert: a new one.
      hit('d1', 'account:a', 41, 50),
      // Another subject, another detector: their own alerts.
      hit('d1', 'account:b', 0, 10),
      hit('d2', 'account:a', 0, 10),
      hit('d2', 'account:a', 100, 110),
    ]);
    expect(Object.fromEntries(opened)).toEqual({ d1: 3, d2: 2 });
  });

  it('folds a hit overlapping two alerts into one of them, opening nothing', () => {
    // [0,10] and [20,30] are two alerts; [5, 25] overlaps both; [1, 2] still falls in the first.
    const opened = alertsOpened([hit('d', 's', 0, 10), hit('d', 's', 20, 30), hit('d', 's', 5, 25), hit('d', 's', 1, 2)]);
    expect(opened.get('d')).toBe(2);
    expect(alertsOpened([]).size).toBe(0);
  });
});

// A subject's outgoing movements of at least `threshold` in the 24h before the evaluation; the
// window runs from the earliest of them.
const bigOut = defineDetector({
  id: 'big_out',
  typology: 'large outflow',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h'],
  params: z.strictObject({ threshold: z.string().regex(/^\d+$/).default('100000') }),
  async evaluate(ctx, params): Promise<DetectorOutcome> {
    const threshold = BigInt(params.threshold);
    const big = (await ctx.activities(new Date(ctx.at.getTime() - 86_400_000), { direction: 'out' })).filter((a) => (a.baseValue ?? 0n) >= threshold);
    if (big.length === 0) return noHit();
    const total = big.reduce((sum, a) => sum + a.baseValue!, 0n);
    return {
      outcome: 'hit',
      score: 0.5,
      severity: 'medium',
      summary: `${big.length} large outgoing movement(s) in 24h.`,
      evidence: {
        movements: big.map((a) => a.movementId),
        counterparties: [],
        amounts: { total: total.toString(), count: big.length, asset: ctx.baseAsset },
        window: { from: big[big.length - 1]!.occurredAt.toISOString(), to: ctx.at.toISOString() },
        thresholds: [{ name: 'movement', threshold: params.threshold, observed: total.toString() }],
      },
    };
  },
});

// A party with at least `minCount` failed logins in the 7 days before the evaluation. It needs
// control events to have been received at all, and the party's data no older than 30 days.
const failedLogins = defineDetector({
  id: 'failed_logins',
  typology: 'failed logins',
  version: 1,
  subjects: ['party'],
  triggers: ['movement', 'control_event'],
  needs: [{ family: 'control_event' }, { family: 'party', maxAgeDays: 30 }],
  windows: ['7d'],
  params: z.strictObject({ minCount: z.number().int().min(1).default(3) }),
  async evaluate(ctx, params): Promise<DetectorOutcome> {
    const failed = await ctx.controlEvents(new Date(ctx.at.getTime() - 7 * 86_400_000), ['auth.failed']);
    if (failed.length < params.minCount) return noHit();
    return {
      outcome: 'hit',
      score: 0.5,
      severity: 'low',
      summary: `${failed.length} failed logins in 7 days.`,
      evidence: {
        movements: [],
        counterparties: [],
        amounts: { total: '0', count: 0, asset: ctx.baseAsset },
        window: { from: failed[0]!.occurredAt.toISOString(), to: ctx.at.toISOString() },
        thresholds: [{ name: 'failed logins', threshold: params.minCount, observed: failed.length }],
      },
    };
  },
});

const LIBRARY = [bigOut, failedLogins];
// The same library after a release gave big_out a parameter rule.
const WITH_RULES = [{ ...bigOut, rules: [aboveZero('threshold')] }, failedLogins];

let world: DetectionWorld;
let deps: BacktestDeps;
const db = () => world.api.db.pool;
const tenant = () => world.api.tenantId;
let clockMs = Date.parse('2026-09-01T12:00:00Z');
const tick = () => new Date((clockMs += 1000));
const candidate = async (name: string, detectors: Record<string, unknown>) => {
  const outcome = await createCandidate(db(), tenant(), { name, detectors }, LIBRARY, tick());
  if (outcome.kind !== 'done') throw new Error(JSON.stringify(outcome));
  return outcome.version;
};
const written = async () =>
  (await db().query(`SELECT (SELECT count(*)::int FROM alerts) AS alerts, (SELECT count(*)::int FROM alert_evidence) AS evidence, (SELECT count(*)::int FROM subject_evaluations) AS evaluations`)).rows[0];

describe('backtest', () => {
  beforeAll(async () => {
    world = await startDetectionWorld();
    deps = { ...world.stores, clock: { now: tick } };
    // June: four movements out of bt-a1, before any control event in the tenant's history.
    await world.party('bt-p1');
    await world.party('bt-p2');
    await world.account('bt-a1', 'bt-p1');
    await world.account('bt-a2', 'bt-p2');
    await world.movements([
      { id: 'bt-m1', from: ['bt-a1', 'bt-p1'], to: ['bt-a2', 'bt-p2'], value: 50_000, at: '2026-06-02T10:00:00Z' },
      { id: 'bt-m2', from: ['bt-a1', 'bt-p1'], to: ['bt-a2', 'bt-p2'], value: 50_000, at: '2026-06-02T14:00:00Z' },
      { id: 'bt-m3', from: ['bt-a1', 'bt-p1'], to: ['bt-a2', 'bt-p2'], value: 200_000, at: '2026-06-05T10:00:00Z' },
      { id: 'bt-m4', from: ['bt-a1', 'bt-p1'], to: ['bt-a2', 'bt-p2'], value: 60_000, at: '2026-06-08T10:00:00Z' },
      // Outside the window replayed below.
      { id: 'bt-m5', from: ['bt-a1', 'bt-p1'], to: ['bt-a2', 'bt-p2'], value: 900_000, at: '2026-06-20T10:00:00Z' },
    ]);
    // July: failed logins of a fresh party, and one of a party whose data is half a year old.
    await world.party('bt-p3', {}, '2026-07-01T00:00:00Z');
    for (const [id, at] of [['bt-c1', '2026-07-03T10:00:00Z'], ['bt-c2', '2026-07-03T11:00:00Z'], ['bt-c3', '2026-07-04T09:00:00Z']] as const) {
      await world.controlEvent(id, 'auth.failed', { kind: 'party', external_id: 'bt-p3' }, at);
    }
    await world.party('bt-p4');
    await world.controlEvent('bt-c4', 'auth.failed', { kind: 'party', external_id: 'bt-p4' }, '2026-07-05T09:00:00Z');
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('counts the alerts a lower threshold would open against the built-in default, folding overlapping hits, and writes no alert', async () => {
    const v = await candidate('lower', { big_out: { params: { threshold: '40000' } }, failed_logins: {} });
    const before = await written();
    const outcome = await backtest(deps, tenant(), v, { from: new Date('2026-06-01T00:00:00Z'), to: new Date('2026-06-10T00:00:00Z') }, LIBRARY);
    if (outcome.kind !== 'done') throw new Error(JSON.stringify(outcome));
    const { report } = outcome;
    expect(report.active_version).toBe(0);
    expect(report.window).toEqual({ from: '2026-06-01T00:00:00.000Z', to: '2026-06-10T00:00:00.000Z' });
    // bt-m1 and bt-m2 hit on overlapping windows: one alert; bt-m3 and bt-m4 one each. The default
    // threshold (1,000.00) is crossed by bt-m3 alone.
    expect(report.detectors.big_out).toMatchObject({ candidate_alerts: 3, candidate_hits: 4, active_alerts: 1, active_hits: 1 });
    // No control event had occurred yet in June: failed_logins could not judge the parties.
    expect(report.detectors.failed_logins).toEqual({
      candidate_alerts: 0,
      active_alerts: 0,
      candidate_hits: 0,
      active_hits: 0,
      non_results: { candidate: { insufficient_data: 8, stale: 0, not_applicable: 0 }, active: { insufficient_data: 8, stale: 0, not_applicable: 0 } },
    });
    expect(report.totals).toEqual({ candidate_alerts: 3, active_alerts: 1, movements: 4, control_events: 0, subjects_evaluated: 4, evaluations: 32 });

    expect(await written()).toEqual(before);
    const stored = await db().query(`SELECT state, backtest FROM rulesets WHERE tenant_id = $1 AND version = $2`, [tenant(), v]);
    expect(stored.rows[0]).toEqual({ state: 'candidate', backtest: JSON.parse(JSON.stringify(report)) });
    const events = await db().query(`SELECT classification, data FROM outgoing_events WHERE tenant_id = $1 AND type = 'ruleset.candidate_ready' AND data->>'stage' = 'backtested'`, [tenant()]);
    expect(events.rows).toEqual([{ classification: 'operational', data: { version: v, stage: 'backtested', candidate_alerts: 3, active_alerts: 1 } }]);
  });

  it('compares with the active ruleset, sees only what had occurred at each instant, and reports stale data', async () => {
    const active = await candidate('active', { big_out: {}, failed_logins: { params: { minCount: 3 } } });
    expect((await activate(db(), tenant(), active, LIBRARY, tick())).kind).toBe('done');
    const v = await candidate('fewer logins', { failed_logins: { params: { minCount: 2 } } });
    const outcome = await backtest(deps, tenant(), v, { from: new Date('2026-07-01T00:00:00Z'), to: new Date('2026-07-31T00:00:00Z') }, LIBRARY);
    if (outcome.kind !== 'done') throw new Error(JSON.stringify(outcome));
    const { report } = outcome;
    expect(report.active_version).toBe(active);
    // At bt-c1 one failure had occurred (no hit for either); at bt-c2 two (the candidate hits), at
    // bt-c3 three (both hit): the candidate's two hits overlap, one alert each.
    expect(report.detectors.failed_logins).toEqual({
      candidate_alerts: 1,
      active_alerts: 1,
      candidate_hits: 2,
      active_hits: 1,
      non_results: { candidate: { insufficient_data: 0, stale: 1, not_applicable: 0 }, active: { insufficient_data: 0, stale: 1, not_applicable: 0 } },
    });
    // Only the active ruleset runs big_out; no movement in July.
    expect(report.detectors.big_out).toEqual({
      candidate_alerts: null,
      active_alerts: 0,
      candidate_hits: null,
      active_hits: 0,
      non_results: { candidate: null, active: { insufficient_data: 0, stale: 0, not_applicable: 0 } },
    });
    expect(report.totals).toMatchObject({ movements: 0, control_events: 4, subjects_evaluated: 2 });
  });

  it('refuses what it cannot backtest, and a window wider than the cap', async () => {
    const active = (await db().query(`SELECT version FROM rulesets WHERE tenant_id = $1 AND state = 'active'`, [tenant()])).rows[0].version;
    const window = { from: new Date('2026-06-01T00:00:00Z'), to: new Date('2026-06-10T00:00:00Z') };
    expect(await backtest(deps, tenant(), active, window, LIBRARY)).toMatchObject({ kind: 'wrong_state', state: 'active', allowed: ['candidate', 'shadow'] });
    expect(await backtest(deps, tenant(), 99, window, LIBRARY)).toMatchObject({ kind: 'not_found' });
    const v = await candidate('capped', { big_out: {} });
    expect(await backtest(deps, tenant(), v, { from: window.to, to: window.from }, LIBRARY)).toMatchObject({ kind: 'invalid', issues: [{ path: 'to' }] });
    expect(await backtest(deps, tenant(), v, { ...window, maxChanges: 3 }, LIBRARY)).toMatchObject({ kind: 'too_large', cap: 3 });
    expect(await backtest(deps, tenant(), v, { ...window, maxChanges: 4 }, LIBRARY)).toMatchObject({ kind: 'done' });
    const stored = await db().query(`SELECT backtest->'max_changes' AS cap FROM rulesets WHERE tenant_id = $1 AND version = $2`, [tenant(), v]);
    expect(stored.rows[0].cap).toBe(4);
  });

  it('backtests stored rulesets made before a parameter rule they break, as live detection runs them', async () => {
    const window = { from: new Date('2026-06-01T00:00:00Z'), to: new Date('2026-06-10T00:00:00Z') };
    expect(await createCandidate(db(), tenant(), { name: 'every movement', detectors: { big_out: { params: { threshold: '0' } } } }, WITH_RULES, tick())).toMatchObject({ kind: 'invalid' });
    // Both stored while the library had no such rule.
    const active = await candidate('every movement, live', { big_out: { params: { threshold: '0' } } });
    expect((await activate(db(), tenant(), active, LIBRARY, tick())).kind).toBe('done');
    const v = await candidate('every movement', { big_out: { params: { threshold: '0' } } });
    const outcome = await backtest(deps, tenant(), v, window, WITH_RULES);
    expect(outcome).toMatchObject({ kind: 'done', report: { active_version: active, detectors: { big_out: { candidate_hits: 4, active_hits: 4 } } } });
  });

  // Runs last: every event the backtests enqueued, swept from the outbox.
  it('every event the backtests enqueued parses with its type\'s declared payload', async () => {
    const swept = await sweepOutbox(db());
    expect(swept.refused).toEqual([]);
    expect(swept.types).toEqual(expect.arrayContaining(['ruleset.candidate_ready']));
  });
});
