import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { defineDetector, noHit } from '../framework/detector.ts';
import { aboveZero } from '../framework/parameter-rules.ts';
import { learnedModel } from '../models/detector.ts';
import { RulesetCache } from './active.ts';
import { LEARNED_DETECTOR_ID } from '../models/detector.ts';
import { activate, createCandidate, listRulesets, rollback, shadowReport, showRuleset, startShadow } from './lifecycle.ts';
import { sweepOutbox } from '../../../services/webhooks/declared-payloads.test-kit.ts';

// Two detectors that never need to run here: the lifecycle only compiles rulesets against them.
const bigOut = defineDetector({
  id: 'big_out',
  typology: 'large outflow',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h'],
  params: z.strictObject({ threshold: z.string().regex(/^\d+$/).default('100000') }),
  evaluate: async () => noHit(),
});
const manyOut = defineDetector({
  id: 'many_out',
  typology: 'many outflows',
  version: 1,
  subjects: ['account', 'party'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h'],
  params: z.strictObject({ minCount: z.number().int().min(1).default(10) }),
  evaluate: async () => noHit(),
});
const LIBRARY = [bigOut, manyOut];
// The same library after a release gave big_out a parameter rule.
const withRules = [{ ...bigOut, rules: [aboveZero('threshold')] }, manyOut];

let api: TestApi;
const db = () => api.db.pool;
// Each step a second later, so events and activations are ordered.
let clockMs = Date.parse('2026-09-01T12:00:00Z');
const tick = () => new Date((clockMs += 1000));

const doc = (name: string, threshold = '100000') => ({ name, detectors: { big_out: { params: { threshold } }, many_out: {} } });
const states = async (tenant: string) =>
  Object.fromEntries((await db().query(`SELECT version, state FROM rulesets WHERE tenant_id = $1 ORDER BY version`, [tenant])).rows.map((r) => [r.version, r.state]));
const events = async (tenant: string) =>
  (await db().query(`SELECT type, classification, data FROM outgoing_events WHERE tenant_id = $1 ORDER BY created_at, envelope_id`, [tenant])).rows;
const create = async (tenant: string, name: string, threshold?: string) => {
  const outcome = await createCandidate(db(), tenant, doc(name, threshold), LIBRARY, tick());
  if (outcome.kind !== 'done') throw new Error(JSON.stringify(outcome));
  return outcome.version;
};

beforeAll(async () => {
  api = await startTestApi();
  for (const tenant of ['lc-create', 'lc-states', 'lc-roll', 'lc-broken', 'lc-shadow', 'lc-shadow-models', 'lc-models']) await createTenant(db(), tenant, 'USD');
});
afterAll(async () => api?.close());

describe('creating a candidate', () => {
  it('stores each document as the next version, in state candidate, and announces it', async () => {
    expect(await createCandidate(db(), 'lc-create', doc('first'), LIBRARY, tick())).toEqual({ kind: 'done', version: 1, name: 'first', leftOut: [] });
    expect(await createCandidate(db(), 'lc-create', doc('second', '5000'), LIBRARY, tick())).toEqual({ kind: 'done', version: 2, name: 'second', leftOut: [] });
    expect(await states('lc-create')).toEqual({ 1: 'candidate', 2: 'candidate' });
    expect(await events('lc-create')).toEqual([
      { type: 'ruleset.candidate_ready', classification: 'operational', data: { version: 1, name: 'first', stage: 'created' } },
      { type: 'ruleset.candidate_ready', classification: 'operational', data: { version: 2, name: 'second', stage: 'created' } },
    ]);
    const shown = await showRuleset(db(), 'lc-create', 2);
    expect(shown).toMatchObject({ kind: 'done', ruleset: { version: 2, name: 'second', state: 'candidate', activatedAt: null, backtest: null, document: doc('second', '5000') } });
    // Versions count per tenant.
    expect(await createCandidate(db(), 'lc-states', doc('other'), LIBRARY, tick())).toMatchObject({ kind: 'done', version: 1 });
  });

  it('refuses a document that does not compile, with the path of each issue, and stores nothing', async () => {
    const outcome = await createCandidate(
      db(),
      'lc-create',
      { name: 'bad', detectors: { big_out: { params: { threshold: 'lots' } }, nope: {}, many_out: { by_segment: { merchant: { minCount: 0 } } } } },
      LIBRARY,
      tick(),
    );
    expect(outcome.kind).toBe('invalid');
    if (outcome.kind !== 'invalid') return;
    expect(outcome.issues.map((i) => i.path).sort()).toEqual(['detectors.big_out.params.threshold', 'detectors.many_out.by_segment.merchant.minCount', 'detectors.nope']);
    const shape = await createCandidate(db(), 'lc-create', { detectors: {} }, LIBRARY, tick());
    expect(shape).toMatchObject({ kind: 'invalid', issues: [{ path: 'name' }] });
    expect(await states('lc-create')).toEqual({ 1: 'candidate', 2: 'candidate' });
    expect(await events('lc-create')).toHaveLength(2);
  });

  it('refuses a document whose learned detector names a model the tenant does not have, at each place it does', async () => {
    const library = [...LIBRARY, learnedModel];
    const outcome = await createCandidate(
      db(),
      'lc-create',
      { name: 'model', detectors: { learned_model: { params: { model: 'default' }, by_segment: { merchant: { model: 'm7' } }, by_risk_tier: { high: { model: 'm9' } } } } },
      library,
      tick(),
    );
    expect(outcome).toMatchObject({ kind: 'invalid' });
    if (outcome.kind !== 'invalid') return;
    expect(outcome.issues.map((i) => i.path)).toEqual(['detectors.learned_model.by_segment.merchant.model', 'detectors.learned_model.by_risk_tier.high.model']);
    expect(await states('lc-create')).toEqual({ 1: 'candidate', 2: 'candidate' });
    // The built-in model every tenant has is fine.
    const built = await createCandidate(db(), 'lc-models', { name: 'model', detectors: { learned_model: { params: { model: 'default' } } } }, library, tick());
    expect(built).toMatchObject({ kind: 'done', version: 1 });
  });

  it('refuses an unknown tenant', async () => {
    expect(await createCandidate(db(), 'lc-nobody', doc('x'), LIBRARY, tick())).toMatchObject({ kind: 'not_found' });
    expect(await states('lc-nobody')).toEqual({});
    expect(await listRulesets(db(), 'lc-nobody')).toMatchObject({ kind: 'not_found' });
  });
});

describe('shadow and activation', () => {
  it('keeps exactly one ruleset in shadow and one active, retiring the previous active one', async () => {
    const tenant = 'lc-states';
    const v2 = await create(tenant, 'two');
    const v3 = await create(tenant, 'three');
    expect(await startShadow(db(), tenant, 1, LIBRARY, tick())).toEqual({ kind: 'done', version: 1, previousShadow: null });
    // A new shadow sends the previous one back to candidate.
    expect(await startShadow(db(), tenant, v2, LIBRARY, tick())).toEqual({ kind: 'done', version: v2, previousShadow: 1 });
    expect(await states(tenant)).toEqual({ 1: 'candidate', 2: 'shadow', 3: 'candidate' });

    expect(await activate(db(), tenant, 1, LIBRARY, tick())).toEqual({ kind: 'done', version: 1, previousVersion: 0 });
    expect(await activate(db(), tenant, v2, LIBRARY, tick())).toEqual({ kind: 'done', version: v2, previousVersion: 1 });
    expect(await states(tenant)).toEqual({ 1: 'retired', 2: 'active', 3: 'candidate' });
    expect(await showRuleset(db(), tenant, v2)).toMatchObject({ kind: 'done', ruleset: { state: 'active', activatedAt: expect.any(Date) } });

    expect((await events(tenant)).slice(1)).toEqual([
      { type: 'ruleset.candidate_ready', classification: 'operational', data: { version: 2, name: 'two', stage: 'created' } },
      { type: 'ruleset.candidate_ready', classification: 'operational', data: { version: 3, name: 'three', stage: 'created' } },
      { type: 'ruleset.candidate_ready', classification: 'operational', data: { version: 1, stage: 'shadow' } },
      { type: 'ruleset.candidate_ready', classification: 'operational', data: { version: 2, stage: 'shadow' } },
      { type: 'ruleset.activated', classification: 'operational', data: { version: 1, previous_version: 0 } },
      { type: 'ruleset.activated', classification: 'operational', data: { version: 2, previous_version: 1 } },
    ]);

    // What the detection pipeline reads: the active one live, nothing in shadow.
    const running = await new RulesetCache(db(), LIBRARY).forTenant(tenant);
    expect([running.live.version, running.live.name, running.shadow]).toEqual([2, 'two', null]);
    expect(v3).toBe(3);
  });

  it('refuses steps from the wrong state or on unknown versions, and changes nothing', async () => {
    const tenant = 'lc-states';
    const before = { states: await states(tenant), events: (await events(tenant)).length };
    expect(await startShadow(db(), tenant, 2, LIBRARY, tick())).toMatchObject({ kind: 'wrong_state', state: 'active', allowed: ['candidate'] });
    expect(await startShadow(db(), tenant, 1, LIBRARY, tick())).toMatchObject({ kind: 'wrong_state', state: 'retired' });
    expect(await activate(db(), tenant, 2, LIBRARY, tick())).toMatchObject({ kind: 'wrong_state', state: 'active', allowed: ['candidate', 'shadow'] });
    expect(await activate(db(), tenant, 1, LIBRARY, tick())).toMatchObject({ kind: 'wrong_state', state: 'retired' });
    expect(await activate(db(), tenant, 99, LIBRARY, tick())).toMatchObject({ kind: 'not_found' });
    expect(await startShadow(db(), tenant, 99, LIBRARY, tick())).toMatchObject({ kind: 'not_found' });
    expect(await showRuleset(db(), tenant, 99)).toMatchObject({ kind: 'not_found' });
    expect(await shadowReport(db(), tenant, 99, tick())).toMatchObject({ kind: 'not_found' });
    expect({ states: await states(tenant), events: (await events(tenant)).length }).toEqual(before);
  });

  it('refuses to shadow or activate a stored ruleset that no longer compiles against the library', async () => {
    const tenant = 'lc-broken';
    const v = await create(tenant, 'uses both');
    const shrunk = [bigOut];
    expect(await startShadow(db(), tenant, v, shrunk, tick())).toMatchObject({ kind: 'invalid', issues: [{ path: 'detectors.many_out' }] });
    expect(await activate(db(), tenant, v, shrunk, tick())).toMatchObject({ kind: 'invalid', issues: [{ path: 'detectors.many_out' }] });
    expect(await states(tenant)).toEqual({ 1: 'candidate' });
  });

  it('refuses a new document that breaks a parameter rule, and keeps running a stored one made before the rule', async () => {
    const tenant = 'lc-rules';
    await createTenant(db(), tenant, 'USD');
    const zero = await createCandidate(db(), tenant, doc('nothing is large', '0'), withRules, tick());
    expect(zero).toMatchObject({ kind: 'invalid', issues: [{ path: 'detectors.big_out.params.threshold', message: 'must be above zero' }] });
    // Stored when the library had no such rule: shadowed, activated and loaded as it was accepted.
    const v = await create(tenant, 'made before the rule', '0');
    expect(await activate(db(), tenant, v, withRules, tick())).toMatchObject({ kind: 'done' });
    expect((await new RulesetCache(db(), withRules).forTenant(tenant)).live.version).toBe(v);
  });
});

describe('rollback', () => {
  it('returns to the previously active ruleset, then to the built-in default, then has nothing to roll back', async () => {
    const tenant = 'lc-roll';
    const [v1, v2, v3] = [await create(tenant, 'one'), await create(tenant, 'two'), await create(tenant, 'three')];
    for (const v of [v1, v2, v3]) expect((await activate(db(), tenant, v, LIBRARY, tick())).kind).toBe('done');
    expect(await states(tenant)).toEqual({ 1: 'retired', 2: 'retired', 3: 'active' });

    expect(await rollback(db(), tenant, LIBRARY, tick())).toEqual({ kind: 'done', fromVersion: 3, toVersion: 2 });
    expect(await states(tenant)).toEqual({ 1: 'retired', 2: 'active', 3: 'rolled_back' });
    expect(await rollback(db(), tenant, LIBRARY, tick())).toEqual({ kind: 'done', fromVersion: 2, toVersion: 1 });
    expect(await rollback(db(), tenant, LIBRARY, tick())).toEqual({ kind: 'done', fromVersion: 1, toVersion: 0 });
    expect(await states(tenant)).toEqual({ 1: 'rolled_back', 2: 'rolled_back', 3: 'rolled_back' });
    expect((await new RulesetCache(db(), LIBRARY).forTenant(tenant)).live.version).toBe(0);

    const before = (await events(tenant)).length;
    expect(await rollback(db(), tenant, LIBRARY, tick())).toMatchObject({ kind: 'not_found', message: expect.stringContaining('built-in default') });
    const all = await events(tenant);
    expect(all).toHaveLength(before);
    expect(all.filter((e) => e.type === 'ruleset.rolled_back')).toEqual([
      { type: 'ruleset.rolled_back', classification: 'operational', data: { from_version: 3, to_version: 2 } },
      { type: 'ruleset.rolled_back', classification: 'operational', data: { from_version: 2, to_version: 1 } },
      { type: 'ruleset.rolled_back', classification: 'operational', data: { from_version: 1, to_version: 0 } },
    ]);
    // Rolled back rulesets are history: they cannot be activated again (create a new version).
    expect(await activate(db(), tenant, v3, LIBRARY, tick())).toMatchObject({ kind: 'wrong_state', state: 'rolled_back' });

    const listed = await listRulesets(db(), tenant);
    if (listed.kind !== 'done') throw new Error(listed.message);
    expect(listed.rulesets.map((r) => [r.version, r.name, r.state])).toEqual([
      [1, 'one', 'rolled_back'],
      [2, 'two', 'rolled_back'],
      [3, 'three', 'rolled_back'],
    ]);
  });
});

describe('the shadow report', () => {
  const insertAlert = async (tenant: string, mode: 'live' | 'shadow', rulesetVersion: number, detector: string, subject: string, createdAt: string) => {
    const { rows } = await db().query<{ alert_id: string }>(
      `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id,
                           window_from, window_to, score, severity, status, summary, explanation, hits, created_at, updated_at)
       VALUES ($1, gen_random_uuid(), $2, $3, $4, 1, 't', 'account', $5, NULL, '2026-08-01T00:00:00Z', '2026-08-01T01:00:00Z', 0.5, 'medium', 'open', 's', 'e', 1, $6, $6)
       RETURNING alert_id`,
      [tenant, mode, rulesetVersion, detector, subject, createdAt],
    );
    return rows[0]!.alert_id;
  };

  it('compares, per detector, what the shadow ruleset opened with what live detection opened since its first shadow alert', async () => {
    const tenant = 'lc-shadow';
    const v = await create(tenant, 'stricter', '5000');
    expect((await startShadow(db(), tenant, v, LIBRARY, new Date('2026-08-30T00:00:00Z'))).kind).toBe('done');
    // Before the shadow ran: not compared.
    await insertAlert(tenant, 'live', 0, 'big_out', 'old', '2026-08-29T00:00:00Z');
    await insertAlert(tenant, 'shadow', v, 'big_out', 'a1', '2026-08-30T10:00:00Z');
    await insertAlert(tenant, 'shadow', v, 'big_out', 'a2', '2026-08-30T11:00:00Z');
    await insertAlert(tenant, 'shadow', v, 'big_out', 'a2', '2026-08-31T11:00:00Z');
    await insertAlert(tenant, 'shadow', v, 'many_out', 'a3', '2026-08-31T12:00:00Z');
    await insertAlert(tenant, 'live', 0, 'big_out', 'a2', '2026-08-30T11:00:00Z');
    await insertAlert(tenant, 'live', 0, 'many_out', 'a4', '2026-08-31T09:00:00Z');
    // Another shadow version's alerts are not this one's.
    await insertAlert(tenant, 'shadow', v + 7, 'big_out', 'a9', '2026-08-31T09:00:00Z');

    const outcome = await shadowReport(db(), tenant, v, new Date('2026-09-01T12:00:00Z'));
    expect(outcome).toEqual({
      kind: 'done',
      report: {
        version: v,
        state: 'shadow',
        period: { from: '2026-08-30T10:00:00.000Z', to: '2026-09-01T12:00:00.000Z', basis: 'first_shadow_alert' },
        detectors: [
          { detector: 'big_out', shadow_alerts: 3, live_alerts: 1, shadow_subjects: 2, live_subjects: 1 },
          { detector: 'many_out', shadow_alerts: 1, live_alerts: 1, shadow_subjects: 1, live_subjects: 1 },
        ],
        totals: { shadow_alerts: 4, live_alerts: 2 },
      },
    });
  });

  it("reports the learned detector once per model: the shadow ruleset's and the live one's apart", async () => {
    const tenant = 'lc-shadow-models';
    const v = await create(tenant, 'with a model', '5000');
    expect((await startShadow(db(), tenant, v, LIBRARY, new Date('2026-08-30T00:00:00Z'))).kind).toBe('done');
    const modelAlert = async (mode: 'live' | 'shadow', rulesetVersion: number, model: string, subject: string, at: string) => {
      const id = await insertAlert(tenant, mode, rulesetVersion, LEARNED_DETECTOR_ID, subject, at);
      await db().query(
        `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence)
         VALUES ($1, $2, 1, $3, $3, 0.9, 'high', $4)`,
        [tenant, id, at, JSON.stringify({ facts: { model: { id: model, version: 1 } } })],
      );
    };
    await modelAlert('shadow', v, 'm4', 'a1', '2026-08-30T10:00:00Z');
    await modelAlert('shadow', v, 'm4', 'a2', '2026-08-30T11:00:00Z');
    await modelAlert('live', 0, 'default', 'a1', '2026-08-30T12:00:00Z');
    await insertAlert(tenant, 'live', 0, 'big_out', 'a3', '2026-08-30T12:00:00Z');
    const outcome = await shadowReport(db(), tenant, v, new Date('2026-09-01T12:00:00Z'));
    expect(outcome.kind === 'done' && outcome.report.detectors).toEqual([
      { detector: 'big_out', shadow_alerts: 0, live_alerts: 1, shadow_subjects: 0, live_subjects: 1 },
      { detector: LEARNED_DETECTOR_ID, model: 'default', shadow_alerts: 0, live_alerts: 1, shadow_subjects: 0, live_subjects: 1 },
      { detector: LEARNED_DETECTOR_ID, model: 'm4', shadow_alerts: 2, live_alerts: 0, shadow_subjects: 2, live_subjects: 0 },
    ]);
  });

  it('has nothing to compare for a candidate that never alerted in shadow', async () => {
    const v = await create('lc-shadow', 'never shadowed');
    expect(await shadowReport(db(), 'lc-shadow', v, tick())).toMatchObject({ kind: 'wrong_state', state: 'candidate' });
  });
});

describe('the public API', () => {
  it('has no ruleset routes: GET /v1/rulesets/active is a governed 404 with any key', async () => {
    for (const [scope, key] of Object.entries(api.keys)) {
      const res = await api.client.get('/v1/rulesets/active', key);
      expect(res.statusCode, scope).toBe(404);
      expect(res.headers['content-type'], scope).toContain('application/problem+json');
      expect(res.json(), scope).toMatchObject({ status: 404, code: 'svc:request/not_found' });
    }
  });
});

// Runs last: every event the ruleset lifecycle enqueued, swept from the outbox.
it('every event the ruleset lifecycle enqueued parses with its type\'s declared payload', async () => {
  const swept = await sweepOutbox(db());
  expect(swept.refused).toEqual([]);
  expect(swept.types).toEqual(expect.arrayContaining(['ruleset.candidate_ready', 'ruleset.activated', 'ruleset.rolled_back']));
});
