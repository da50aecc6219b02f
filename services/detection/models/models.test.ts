import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../test/support/detection-world.ts';
import { applyCaseAction } from '../../cases/actions.ts';
import { defaultRulesetDocument } from '../framework/ruleset.ts';
import { learnedModel, LEARNED_DETECTOR_ID } from './detector.ts';
import { dispositionLabels } from './label-store.ts';
import { parseLabelFile } from './labels.ts';
import { activateModel, shadowModel } from './lifecycle.ts';
import { activate as activateRuleset, createCandidate } from '../rulesets/lifecycle.ts';
import { DEFAULT_MODEL_FEATURES } from './default-model-features.ts';
import { FEATURE_NAMES } from './features.ts';
import { listModels, loadModel, saveModel } from './store.ts';
import { buildBank, day, labelRows, MULES, mulePattern, NORMALS, ordinary, TENANT } from './test-kit.ts';
import { trainModel } from './training.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';

let world: DetectionWorld;

const deps = () => ({ ...world.stores, clock: world.api.clock });
const labelFile = (rows: string[]) => {
  const parsed = parseLabelFile(['kind,external_id,label', ...rows].join('\n'), world.api.clock.now());
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.labels;
};

beforeAll(async () => {
  world = await startDetectionWorld({ SVC_RATE_LIMIT_CAPACITY: '100000', SVC_RATE_LIMIT_REFILL_PER_S: '100000' });
  await buildBank(world);
}, 120_000);
afterAll(async () => world?.close());

describe('training', () => {
  it('learns from a label file and keeps a held-back report with the model', async () => {
    const labels = labelFile([...labelRows(), 'account,never-seen,0']);
    const outcome = await trainModel(deps(), TENANT, labels);
    expect(outcome.kind).toBe('done');
    if (outcome.kind !== 'done') return;
    expect(outcome.model.id).toBe('m1');
    const t = outcome.model.document.training;
    expect(t).toMatchObject({ examples: MULES + NORMALS, positives: MULES, labels: { file: MULES + NORMALS + 1, dispositions: 0, skipped: 1 } });
    // 25 % of each class held back: 2 mules and 6 ordinary accounts.
    expect(t.held_out).toMatchObject({ examples: 8, positives: 2 });
    for (const metric of ['precision', 'recall', 'f1', 'pr_auc'] as const) expect(t.held_out[metric]).toBeGreaterThanOrEqual(0.99);
    expect(t.library).toMatch(/tfjs/);
    expect((await loadModel(world.api.db.pool, TENANT, 'm1'))?.document).toEqual(outcome.model.document);
    expect((await listModels(world.api.db.pool, TENANT)).map((m) => m.id)).toEqual(['default', 'm1']);
  });

  it('takes each account as one example, on one side of the split, and says which accounts are labelled both ways', async () => {
    // mule-0 cleared as of its first payments, then (no as_of: at its latest activity) confirmed.
    const parsed = parseLabelFile(['kind,external_id,label,as_of', 'account,mule-0,0,2026-07-02T12:00:00Z', ...labelRows().map((row) => `${row},`)].join('\n'), world.api.clock.now());
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const outcome = await trainModel(deps(), TENANT, parsed.labels);
    expect(outcome).toMatchObject({ kind: 'done', warnings: ['account mule-0 is labelled both ways (1 positive, 1 negative); kept positive from the label file'] });
    if (outcome.kind !== 'done') return;
    expect(outcome.model.document.training).toMatchObject({ examples: MULES + NORMALS, positives: MULES, held_out: { examples: 8, positives: 2 } });
  });

  it('ships a default model every tenant can run', async () => {
    const shipped = await loadModel(world.api.db.pool, TENANT, 'default');
    expect(shipped).toMatchObject({ id: 'default', version: 0, document: { format: 'logistic-regression/v2' } });
    expect(shipped!.document.features.map((f) => f.name)).toEqual(FEATURE_NAMES);
    // Its rules are the code's: the file was fitted on what detection scores it with.
    expect(shipped!.document.features).toEqual(DEFAULT_MODEL_FEATURES);
    expect(shipped!.document.training.held_out.examples).toBeGreaterThan(0);
  });

  it('names the labels it could not use: ids the tenant does not have, and accounts quiet over the 90 days up to their instant', async () => {
    const labels = labelFile([...labelRows(), 'account,never-seen,0', 'account,other-bank-7,1', 'party,no-such-party,1']);
    const outcome = await trainModel(deps(), TENANT, labels);
    expect(outcome).toMatchObject({
      kind: 'done',
      warnings: [
        '1 label(s) on a party holding no account of acme: party no-such-party',
        "2 account(s) unknown to acme or without activity in the 90 days up to their label's instant: never-seen, other-bank-7",
      ],
    });
    // Ten named, the rest counted.
    const many = await trainModel(deps(), TENANT, labelFile([...labelRows(), ...Array.from({ length: 12 }, (_, i) => `account,gone-${i},0`)]));
    expect(many).toMatchObject({ kind: 'done', warnings: [expect.stringMatching(/^12 account\(s\) unknown to acme .*: gone-0, gone-1, .*, gone-9, and 2 more$/)] });
  });

  it('takes no example of an account without activity in the 90 days up to its instant', async () => {
    // Judged long after their activity (an as_of given past it), the mules' windows are empty: no
    // example, where they taught the model that an empty window is laundering.
    const late = new Date('2027-01-01T00:00:00Z');
    const quiet = labelFile(labelRows()).map((l) => (l.label ? { ...l, asOf: late } : l));
    const refused = await trainModel(deps(), TENANT, quiet);
    expect(refused).toMatchObject({ kind: 'too_few' });
    if (refused.kind !== 'too_few') return;
    expect(refused.message).toContain('got 0 positive and 24 negative');
    expect(refused.message).toContain('8 without an account or activity');
    expect(refused.message).toContain(`8 account(s) unknown to acme or without activity in the 90 days up to their label's instant: ${Array.from({ length: MULES }, (_, i) => `mule-${i}`).join(', ')}`);
  });

  it('refuses too few labels of a class, and an unknown tenant', async () => {
    expect(await trainModel(deps(), TENANT, labelFile(['account,mule-0,1', 'account,normal-0,0']))).toMatchObject({ kind: 'too_few' });
    expect(await trainModel(deps(), 'nobody', [])).toMatchObject({ kind: 'not_found' });
  });
});

describe('the learned detector', () => {
  it('flags an account it never saw labelled, and explains why', async () => {
    await world.movements(mulePattern('mule-8', 20));
    await world.movements(ordinary('normal-24', 3, 20, 'normal-0'));
    await world.settle();
    const outcome = await world.evaluate(learnedModel, { kind: 'account', id: 'mule-8' }, day(20, 17), { params: { model: 'm1' } });
    expect(outcome.outcome).toBe('hit');
    if (outcome.outcome !== 'hit') return;
    const facts = outcome.evidence.facts as { model: { id: string; version: number }; score: number; top_features: Array<{ feature: string; value: string; own_baseline: string }> };
    expect(facts.model).toMatchObject({ id: 'm1', version: 1 });
    expect(facts.score).toBeCloseTo(outcome.score, 3);
    expect(facts.top_features.length).toBeGreaterThan(0);
    // mule-8 had no activity before: its own earlier values are zero.
    expect(facts.top_features.every((f) => f.own_baseline === '0' || f.own_baseline.startsWith('0.00'))).toBe(true);
    expect(outcome.summary).toMatch(/Model m1 scored/);
    expect(outcome.evidence.movements).toHaveLength(7);
    expect(await world.evaluate(learnedModel, { kind: 'account', id: 'normal-24' }, day(20, 17), { params: { model: 'm1' } })).toEqual({ outcome: 'no_hit' });
  });

  it('sees nothing after the instant it judges', async () => {
    // Before its pattern, mule-8 had no payments at all.
    expect(await world.evaluate(learnedModel, { kind: 'account', id: 'mule-8' }, day(19), { params: { model: 'm1' } })).toEqual({ outcome: 'no_hit' });
  });

  it('answers not_applicable for a model the tenant does not have', async () => {
    expect(await world.evaluate(learnedModel, { kind: 'account', id: 'mule-8' }, day(20, 17), { params: { model: 'm99' } })).toMatchObject({ outcome: 'not_applicable' });
  });

  it('is left out of the built-in default ruleset', () => {
    expect(Object.keys(defaultRulesetDocument([learnedModel]).detectors)).toEqual([]);
  });
});

describe('through the ruleset lifecycle', () => {
  it('runs in shadow, goes live as the same ruleset, raises explained alerts, and its dispositions become labels', async () => {
    const pool = world.api.db.pool;
    const library = [learnedModel];
    expect(await shadowModel(pool, TENANT, 'm7', library, world.api.clock.now())).toMatchObject({ kind: 'not_found' });
    const shadow = await shadowModel(pool, TENANT, 'm1', library, world.api.clock.now());
    expect(shadow).toMatchObject({ kind: 'done', rulesetVersion: 1 });
    // Put in shadow again: nothing to do, and no second candidate.
    expect(await shadowModel(pool, TENANT, 'm1', library, world.api.clock.now())).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/already runs in shadow/) });
    const live = await activateModel(pool, TENANT, 'm1', library, world.api.clock.now());
    expect(live).toMatchObject({ kind: 'done', rulesetVersion: 1, created: false, previousVersion: 0 });
    const { rows: rulesets } = await pool.query(`SELECT version, state, document FROM rulesets WHERE tenant_id = $1`, [TENANT]);
    expect(rulesets).toMatchObject([{ version: 1, state: 'active', document: { detectors: { [LEARNED_DETECTOR_ID]: { params: { model: 'm1' } } } } }]);

    await world.startDetection({ library });
    await world.movements(mulePattern('mule-8', 25));
    await world.settle();
    const { rows: alerts } = await pool.query(
      `SELECT a.subject_id, a.detector_id, a.explanation, a.episode_id, a.score, e.evidence FROM alerts a JOIN alert_evidence e USING (tenant_id, alert_id)
        WHERE a.tenant_id = $1 AND a.mode = 'live' ORDER BY e.seq`,
      [TENANT],
    );
    const mule = alerts.filter((a) => a.subject_id === 'mule-8');
    expect(mule.length).toBeGreaterThan(0);
    expect(mule[0]).toMatchObject({ detector_id: LEARNED_DETECTOR_ID, evidence: { facts: { model: { id: 'm1' } } } });
    expect(mule[0].explanation).toMatch(/Model m1 scored .* most weight: /);
    // The headline's score is the evidence's, and the summary's.
    expect(mule[0].score).toBe(mule[0].evidence.facts.score);
    expect(mule[0].explanation).toContain(`scored ${mule[0].evidence.facts.score.toFixed(3)} (threshold ${mule[0].evidence.facts.threshold.toFixed(3)})`);
    expect(alerts.every((a) => a.detector_id === LEARNED_DETECTOR_ID)).toBe(true);

    const episode = mule[0].episode_id as string;
    expect(episode).toBeTruthy();
    const disposed = await applyCaseAction(pool, { tenantId: TENANT, episodeId: episode, disposition: 'false_positive', actor: 'test' }, world.api.clock.now());
    expect(disposed.kind).toBe('applied');
    // The subjects of the episode's alerts: not mule-8's holder, a member of the episode too, whose
    // label would reach every account it holds.
    const { rows: members } = await pool.query(`SELECT subject_kind, subject_id FROM episode_members WHERE tenant_id = $1 AND episode_id = $2 AND role = 'subject'`, [TENANT, episode]);
    expect(members).toEqual(expect.arrayContaining([{ subject_kind: 'party', subject_id: 'p-mule-8' }]));
    const alerted = [...new Set(alerts.filter((a) => a.episode_id === episode).map((a) => a.subject_id as string))].sort();
    expect(alerted).toContain('mule-8');
    const labels = await dispositionLabels(pool, TENANT);
    expect(labels.map((l) => `${l.kind}:${l.externalId}`).sort()).toEqual(alerted.map((id) => `account:${id}`));
    expect(labels.every((l) => l.label === false && l.source === 'disposition')).toBe(true);
  });
});

describe('the default model', () => {
  it('runs for a tenant of the asset it was trained on and is refused for another, whose amounts it would misread', async () => {
    const pool = world.api.db.pool;
    await createTenant(pool, 'usd-bank', 'USD');
    await createTenant(pool, 'idr-bank', 'IDR');
    expect(await shadowModel(pool, 'usd-bank', 'default', [learnedModel], world.api.clock.now())).toMatchObject({ kind: 'done', model: 'default' });
    expect(await shadowModel(pool, 'idr-bank', 'default', [learnedModel], world.api.clock.now())).toEqual({
      kind: 'invalid',
      message: "the default model was trained on amounts in USD and idr-bank's base asset is IDR: train a model of its own (svc models train)",
      issues: [],
    });
    expect(await activateModel(pool, 'idr-bank', 'default', [learnedModel], world.api.clock.now())).toMatchObject({ kind: 'invalid' });
    expect((await pool.query('SELECT count(*)::int AS n FROM rulesets WHERE tenant_id = $1', ['idr-bank'])).rows[0].n).toBe(0);
    // Nor is it listed among the models the tenant can run.
    expect((await listModels(pool, 'usd-bank')).map((m) => m.id)).toEqual(['default']);
    expect(await listModels(pool, 'idr-bank')).toEqual([]);
  });

  it('is refused for another base asset in a ruleset written by hand too, and does not score such a tenant', async () => {
    const pool = world.api.db.pool;
    await createTenant(pool, 'eur-bank', 'EUR');
    const document = { name: 'by hand', detectors: { [LEARNED_DETECTOR_ID]: { params: { model: 'default' }, by_segment: { merchant: { model: 'default' } } } } };
    expect(await createCandidate(pool, 'eur-bank', document, [learnedModel], world.api.clock.now())).toEqual({
      kind: 'invalid',
      message: 'the ruleset document names a model the tenant cannot run',
      issues: [
        { path: 'detectors.learned_model.params.model', message: "the default model was trained on amounts in USD and eur-bank's base asset is EUR: train a model of its own (svc models train)" },
        { path: 'detectors.learned_model.by_segment.merchant.model', message: "the default model was trained on amounts in USD and eur-bank's base asset is EUR: train a model of its own (svc models train)" },
      ],
    });
    expect((await pool.query('SELECT count(*)::int AS n FROM rulesets WHERE tenant_id = $1', ['eur-bank'])).rows[0].n).toBe(0);
    // A ruleset stored before the refusal existed: the detector answers not_applicable, not a score.
    const mule = { kind: 'account' as const, id: 'mule-0' };
    expect(await world.evaluate(learnedModel, mule, day(2, 17), { params: { model: 'default' }, baseAsset: 'EUR' })).toMatchObject({ outcome: 'not_applicable' });
    expect((await world.evaluate(learnedModel, mule, day(2, 17), { params: { model: 'default' } })).outcome).not.toBe('not_applicable');
  });

  it('goes live on what is live now, not on the ruleset it was shadowed beside when that has changed since', async () => {
    const pool = world.api.db.pool;
    const now = world.api.clock.now();
    await createTenant(pool, 'tuned-bank', 'USD');
    expect(await shadowModel(pool, 'tuned-bank', 'default', [learnedModel], now)).toMatchObject({ kind: 'done', rulesetVersion: 1 });
    // The operator activates a ruleset of their own meanwhile (here renamed), which retires nothing of the model's.
    const tuned = await createCandidate(pool, 'tuned-bank', { ...defaultRulesetDocument([learnedModel]), name: 'tuned' }, [learnedModel], now);
    expect(tuned).toMatchObject({ kind: 'done', version: 2 });
    expect(await activateRuleset(pool, 'tuned-bank', 2, [learnedModel], now)).toMatchObject({ kind: 'done' });
    expect(await activateModel(pool, 'tuned-bank', 'default', [learnedModel], now)).toMatchObject({ kind: 'done', rulesetVersion: 3, created: true, previousVersion: 2 });
    const { rows } = await pool.query(`SELECT document->>'name' AS name FROM rulesets WHERE tenant_id = $1 AND state = 'active'`, ['tuned-bank']);
    expect(rows).toEqual([{ name: 'tuned + model default' }]);
  });
});

describe('storing models', () => {
  it('gives trainings that finish together one version each', async () => {
    const pool = world.api.db.pool;
    const { document } = (await loadModel(pool, TENANT, 'm1'))!;
    const last = (await listModels(pool, TENANT)).at(-1)!.version;
    const saved = await Promise.all(Array.from({ length: 8 }, () => saveModel(pool, TENANT, document, world.api.clock.now())));
    expect(saved.map((m) => m.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 8 }, (_, i) => last + 1 + i));
  });
});
