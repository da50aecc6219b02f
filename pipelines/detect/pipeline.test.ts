import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import { defineDetector, noHit, type DetectorOutcome } from '../../services/detection/framework/detector.ts';
import { applyCaseAction } from '../../services/cases/actions.ts';
import type { DetectPipeline } from './pipeline.ts';
import { sweepOutbox } from '../../services/webhooks/declared-payloads.test-kit.ts';
import { addTallies } from '../../services/conformance/store.ts';

// A detector simple enough to reason about: a subject that sent at least `threshold` in one
// movement in the last 24h; high from ten times the threshold.
const bigOut = defineDetector({
  id: 'big_out',
  typology: 'large outflow',
  version: 1,
  subjects: ['account', 'party'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h'],
  params: z.strictObject({ threshold: z.string().regex(/^\d+$/).default('100000') }),
  async evaluate(ctx, params): Promise<DetectorOutcome> {
    const threshold = BigInt(params.threshold);
    const from = new Date(ctx.at.getTime() - 86_400_000);
    const big = (await ctx.activities(from, { direction: 'out' })).filter((a) => (a.baseValue ?? 0n) >= threshold);
    if (big.length === 0) return noHit();
    const top = big.reduce((max, a) => (a.baseValue! > max ? a.baseValue! : max), 0n);
    const total = big.reduce((sum, a) => sum + a.baseValue!, 0n);
    return {
      outcome: 'hit',
      score: top >= threshold * 10n ? 0.9 : 0.5,
      severity: top >= threshold * 10n ? 'high' : 'medium',
      summary: `${big.length} outgoing movement(s) of at least the threshold in 24h.`,
      evidence: {
        movements: big.map((a) => a.movementId),
        counterparties: [...new Set(big.flatMap((a) => (a.counterparty ? [a.counterparty] : [])))],
        amounts: { total: total.toString(), count: big.length, asset: ctx.baseAsset, out: total.toString() },
        window: { from: big[big.length - 1]!.occurredAt.toISOString(), to: ctx.at.toISOString() },
        thresholds: [{ name: 'largest movement', threshold: params.threshold, observed: top.toString() }],
      },
    };
  },
});

let world: DetectionWorld;
let detect: DetectPipeline;
const db = () => world.api.db.pool;
const events = async (type?: string) =>
  (await db().query(`SELECT type, classification, data FROM outgoing_events WHERE tenant_id = 'acme' AND ($1::text IS NULL OR type = $1) ORDER BY created_at, envelope_id`, [type ?? null])).rows;
const alerts = async (mode = 'live') =>
  (await db().query(`SELECT alert_id, subject_kind, subject_id, severity, hits, status, episode_id, explanation FROM alerts WHERE tenant_id = 'acme' AND mode = $1 ORDER BY subject_kind, subject_id`, [mode])).rows;

beforeAll(async () => {
  world = await startDetectionWorld();
  detect = await world.startDetection({ library: [bigOut] });
  await world.party('p1');
  await world.party('p2');
  await world.account('a1', 'p1');
  await world.account('a2', 'p2');
  await world.settle();
});
afterAll(async () => world?.close());

describe('the detection pipeline', () => {
  it('records a party\'s no-hit as an outcome, not an alert; an account\'s outcomes are not kept', async () => {
    await world.movement({ id: 'm1', from: ['a1', 'p1'], to: ['a2', 'p2'], value: 50_000, at: '2026-08-19T10:00:00Z' });
    await world.settle();
    expect(await alerts()).toEqual([]);
    const { rows } = await db().query(`SELECT subject_kind, subject_id, outcomes FROM subject_evaluations WHERE tenant_id = 'acme' AND mode = 'live' ORDER BY 1, 2`);
    // Postures read the parties' outcomes; nothing reads an account's (no detector of this library
    // judges accounts on schedule). The next case shows the accounts evaluated: one alerts.
    expect(rows).toEqual([
      { subject_kind: 'party', subject_id: 'p1', outcomes: { big_out: 'no_hit' } },
      { subject_kind: 'party', subject_id: 'p2', outcomes: { big_out: 'no_hit' } },
    ]);
    const postures = await db().query(`SELECT party_id, band FROM party_postures WHERE tenant_id = 'acme' ORDER BY 1`);
    expect(postures.rows).toEqual([{ party_id: 'p1', band: 'low' }, { party_id: 'p2', band: 'low' }]);
  });

  it('opens one alert per subject with an explanation, groups connected alerts into one episode and raises the posture', async () => {
    await world.movement({ id: 'm2', from: ['a1', 'p1'], to: ['a2', 'p2'], value: 200_000, at: '2026-08-20T11:00:00Z' });
    await world.settle();
    const opened = await alerts();
    expect(opened.map((a) => [a.subject_kind, a.subject_id, a.severity, a.hits, a.status])).toEqual([
      ['account', 'a1', 'medium', 1, 'open'],
      ['party', 'p1', 'medium', 1, 'open'],
    ]);
    expect(opened[0].explanation).toContain('largest movement 2,000.00 USD against 1,000.00 USD');
    expect(opened[0].explanation).toContain('Normal behaviour over the previous');
    // The account and its holder are one hop apart: one episode.
    expect(new Set(opened.map((a) => a.episode_id)).size).toBe(1);
    expect((await events('alert.opened')).map((e) => [e.classification, e.data.subject]).sort((x, y) => x[1].kind.localeCompare(y[1].kind))).toEqual([
      ['restricted_aml', { kind: 'account', external_id: 'a1' }],
      ['restricted_aml', { kind: 'party', external_id: 'p1' }],
    ]);
    expect((await events('episode.updated')).map((e) => e.data.change).sort()).toEqual(['alert_added', 'opened']);
    const members = await db().query(`SELECT subject_kind, subject_id, role FROM episode_members WHERE tenant_id = 'acme' ORDER BY 1, 2`);
    expect(members.rows).toEqual([
      { subject_kind: 'account', subject_id: 'a1', role: 'subject' },
      { subject_kind: 'account', subject_id: 'a2', role: 'counterparty' },
      { subject_kind: 'party', subject_id: 'p1', role: 'subject' },
      { subject_kind: 'party', subject_id: 'p2', role: 'counterparty' },
    ]);
    const posture = await db().query(`SELECT band FROM party_postures WHERE tenant_id = 'acme' AND party_id = 'p1'`);
    expect(posture.rows[0].band).toBe('medium');
    expect((await events('risk_state.changed')).map((e) => e.data)).toContainEqual(expect.objectContaining({ subject: { kind: 'party', external_id: 'p1' }, band: 'medium', previous_band: 'low' }));
  });

  it('adds nothing when every change record is delivered again', async () => {
    const before = { alerts: await alerts(), events: (await events()).length, evidence: (await db().query('SELECT count(*)::int AS n FROM alert_evidence')).rows[0].n };
    await detect.stop();
    await db().query(`DELETE FROM consumer_offsets WHERE group_name = 'detect'`);
    detect = await world.startDetection({ library: [bigOut] });
    await world.settle();
    expect({ alerts: await alerts(), events: (await events()).length, evidence: (await db().query('SELECT count(*)::int AS n FROM alert_evidence')).rows[0].n }).toEqual(before);
  });

  it('updates the open alert with new evidence in an overlapping window, escalates and recommends', async () => {
    await world.movement({ id: 'm3', from: ['a1', 'p1'], to: ['a2', 'p2'], value: 2_000_000, at: '2026-08-20T15:00:00Z' });
    await world.settle();
    const updated = await alerts();
    expect(updated.map((a) => [a.subject_id, a.severity, a.hits])).toEqual([
      ['a1', 'high', 2],
      ['p1', 'high', 2],
    ]);
    const evidence = await db().query(`SELECT seq, evidence->'movements' AS movements FROM alert_evidence e JOIN alerts a USING (tenant_id, alert_id) WHERE a.subject_id = 'a1' ORDER BY seq`);
    expect(evidence.rows).toEqual([
      { seq: 1, movements: ['m2'] },
      { seq: 2, movements: ['m3', 'm2'] },
    ]);
    expect((await events('episode.escalated')).length).toBe(1);
    const [recommendation] = await events('recommendation.issued');
    expect(recommendation.classification).toBe('advisory');
    // Sanitised: nothing but subject, band, severity, recommendation code and episode.
    expect(Object.keys(recommendation.data).sort()).toEqual(['band', 'episode_id', 'recommendation', 'severity', 'subject']);
    expect(recommendation.data).toMatchObject({ subject: { kind: 'party', external_id: 'p1' }, band: 'high', recommendation: 'enhanced_review' });
    expect(recommendation.data.episode_id).toMatch(/^epsd_/);
  });

  it('opens a new alert when the window no longer overlaps, in the same open episode', async () => {
    await world.movement({ id: 'm4', from: ['a1', 'p1'], to: ['a2', 'p2'], value: 300_000, at: '2026-08-25T10:00:00Z' });
    await world.settle();
    const all = await alerts();
    expect(all.filter((a) => a.subject_id === 'a1')).toHaveLength(2);
    expect(new Set(all.map((a) => a.episode_id)).size).toBe(1);
  });

  it('records what a ruleset in shadow would have alerted, and publishes none of it', async () => {
    await db().query(
      `INSERT INTO rulesets (tenant_id, version, name, document, state, created_at) VALUES ('acme', 1, 'stricter', $1, 'shadow', now())`,
      [JSON.stringify({ name: 'stricter', detectors: { big_out: { params: { threshold: '10000' } } } })],
    );
    // The ruleset cache holds for 5 s; a fresh pipeline reads it at once.
    await detect.stop();
    detect = await world.startDetection({ library: [bigOut] });
    const eventsBefore = (await events()).length;
    await world.movement({ id: 'm5', from: ['a2', 'p2'], to: ['a1', 'p1'], value: 20_000, at: '2026-08-26T10:00:00Z' });
    await world.settle();
    const shadow = await alerts('shadow');
    expect(shadow.map((a) => a.subject_id)).toEqual(['a2', 'p2']);
    expect(shadow.every((a) => a.episode_id === null)).toBe(true);
    expect((await alerts()).filter((a) => a.subject_id === 'a2')).toEqual([]);
    expect((await events()).length).toBe(eventsBefore);
  });

  it('marks a silent movement feed degraded and recovered when it returns', async () => {
    world.api.clock.advance(2 * 3_600_000);
    await detect.sweep();
    const degraded = await events('coverage.degraded');
    expect(degraded.map((e) => [e.classification, e.data.family])).toEqual([['operational', 'movement']]);
    await world.movement({ id: 'm6', from: ['a1', 'p1'], to: ['a2', 'p2'], value: 100, at: '2026-08-27T10:00:00Z' });
    await world.settle();
    expect((await events('coverage.recovered')).map((e) => e.data.family)).toEqual(['movement']);
    const { rows } = await db().query(`SELECT state FROM feed_coverage WHERE tenant_id = 'acme' AND family = 'movement'`);
    expect(rows[0].state).toBe('active');
  });

  it("announces at its sweep a feed refused far more than the week before (decision 0077)", async () => {
    const bucket = new Date(Math.floor(world.api.clock.now().getTime() / 300_000) * 300_000);
    await addTallies(db(), [
      { tenantId: 'acme', family: 'party', bucket, code: '', path: '', items: 70 },
      { tenantId: 'acme', family: 'party', bucket, code: 'svc:validation/schema', path: 'event.data.type', items: 30 },
    ]);
    await detect.sweep();
    const drift = await events('conformance.drift_detected');
    expect(drift.map((e) => [e.classification, e.data.family, e.data.refused, e.data.received])).toEqual([['operational', 'party', 30, 100]]);
    await detect.sweep();
    expect(await events('conformance.drift_detected')).toHaveLength(1);
  });

  it('never re-alerts facts an analyst disposed of, and reopens the episode on a new fact', async () => {
    const { rows } = await db().query(`SELECT DISTINCT episode_id FROM alerts WHERE tenant_id = 'acme' AND mode = 'live'`);
    expect(rows).toHaveLength(1);
    const episodeId = `epsd_${rows[0].episode_id}`;
    const disposed = await applyCaseAction(db(), { tenantId: 'acme', episodeId, disposition: 'false_positive', actor: 'test' }, world.api.clock.now());
    expect(disposed.kind).toBe('applied');
    const alertsBefore = (await alerts()).length;
    // Every record again: the disposed facts raise nothing and the episode stays resolved.
    await detect.stop();
    await db().query(`DELETE FROM consumer_offsets WHERE group_name = 'detect'`);
    detect = await world.startDetection({ library: [bigOut] });
    await world.settle();
    expect((await alerts()).length).toBe(alertsBefore);
    expect((await db().query(`SELECT status FROM episodes WHERE tenant_id = 'acme'`)).rows).toEqual([{ status: 'resolved' }]);
    // A new fact does.
    await world.movement({ id: 'm7', from: ['a1', 'p1'], to: ['a2', 'p2'], value: 250_000, at: '2026-08-28T10:00:00Z' });
    await world.settle();
    // Reopened, and at its (kept) high severity escalated again at once.
    expect((await db().query(`SELECT status, case_status, disposition FROM episodes WHERE tenant_id = 'acme'`)).rows).toEqual([{ status: 'escalated', case_status: 'open', disposition: null }]);
    expect(await events('episode.reopened')).toHaveLength(1);
    const history = await db().query(`SELECT actor, case_status FROM case_actions WHERE tenant_id = 'acme' ORDER BY seq`);
    expect(history.rows).toEqual([{ actor: 'test', case_status: 'closed' }, { actor: 'detection', case_status: 'open' }]);
    // The test clock stands still, so events are told apart by content, not by time.
    const reopening = (await events('case.status_changed')).filter((e) => e.data.reason === 'new_alert');
    expect(reopening.map((e) => e.data)).toEqual([expect.objectContaining({ case_status: 'open', previous_case_status: 'closed' })]);
  });

  it('takes a historical import in as context: nothing is judged on it, and the first live fact is judged with it', async () => {
    await world.party('h1');
    await world.party('h2');
    await world.account('ha1', 'h1');
    await world.account('ha2', 'h2');
    await world.settle();
    const coverage = async () => (await db().query(`SELECT family, state, last_received_at, last_occurred_at FROM feed_coverage WHERE tenant_id = 'acme' ORDER BY family`)).rows;
    // The import reports its own progress (import.*); detection must add nothing.
    const detected = async () => (await events()).filter((e) => !e.type.startsWith('import.')).length;
    const before = { coverage: await coverage(), events: await detected() };
    // A large payment from ha1, landed through the public import path before the go-live watermark.
    await world.importMovements([{ id: 'h-m1', from: ['ha1', null], to: ['ha2', null], value: 300_000, at: '2026-08-29T08:00:00Z' }], '2026-08-29T09:00:00Z');
    await world.settle();

    // Taken in by the stores and consumed by detection, but nothing judged on it: no alert, no
    // outcome, no posture, no outgoing event, and the live feed's coverage untouched.
    const imported = (await db().query(`SELECT event_id, historical FROM inbox_events WHERE tenant_id = 'acme' AND external_id = 'h-m1'`)).rows[0];
    expect(imported.historical).toBe(true);
    const stages = (await db().query(`SELECT stage, detail FROM event_stages WHERE tenant_id = 'acme' AND event_id = $1 AND status = 'ok' ORDER BY stage`, [imported.event_id])).rows;
    expect(stages.map((r) => r.stage)).toEqual(expect.arrayContaining(['aggregates', 'canonical', 'detect', 'graph']));
    expect(stages.find((r) => r.stage === 'detect').detail).toEqual({ evaluated: false, reason: 'historical_import' });
    // As the event's status shows it.
    const status = (await world.api.client.get(`/v1/events/evt_${imported.event_id}`, world.api.keys.ingest)).json();
    expect(status).toMatchObject({ historical: true, status: 'processed' });
    expect(status.stage_history).toContainEqual(expect.objectContaining({ stage: 'detect', status: 'ok', detail: { evaluated: false, reason: 'historical_import' } }));
    const subjects = ['ha1', 'ha2', 'h1', 'h2'];
    const judged = async () => (await db().query(`SELECT subject_id FROM subject_evaluations WHERE tenant_id = 'acme' AND subject_id = ANY($1::text[])`, [subjects])).rows;
    expect(await judged()).toEqual([]);
    expect((await alerts()).filter((a) => subjects.includes(a.subject_id))).toEqual([]);
    expect((await db().query(`SELECT party_id FROM party_postures WHERE tenant_id = 'acme' AND party_id = ANY($1::text[])`, [subjects])).rows).toEqual([]);
    expect({ coverage: await coverage(), events: await detected() }).toEqual(before);

    // A small live payment an hour after go-live: its 24 hours hold the imported one.
    await world.movement({ id: 'h-m2', from: ['ha1', null], to: ['ha2', null], value: 1_000, at: '2026-08-29T10:00:00Z' });
    await world.settle();
    const raised = (await alerts()).filter((a) => subjects.includes(a.subject_id));
    expect(raised.map((a) => [a.subject_kind, a.subject_id])).toEqual([
      ['account', 'ha1'],
      ['party', 'h1'],
    ]);
    const cited = await db().query(`SELECT DISTINCT jsonb_array_elements_text(evidence->'movements') AS movement FROM alert_evidence WHERE tenant_id = 'acme' AND alert_id = ANY($1::uuid[])`, [raised.map((a) => a.alert_id)]);
    expect(cited.rows).toEqual([{ movement: 'h-m1' }]);
    expect((await judged()).length).toBeGreaterThan(0);
    const live = await db().query(`SELECT s.detail FROM event_stages s JOIN inbox_events i USING (tenant_id, event_id) WHERE i.tenant_id = 'acme' AND i.external_id = 'h-m2' AND s.stage = 'detect'`);
    expect(live.rows).toEqual([{ detail: null }]);
  });

  it("keeps the subjects' activity between batches: a subject evaluated before is not loaded again", async () => {
    const store = world.stores.aggregates;
    const loaded: string[] = [];
    const original = store.snapshots.bind(store);
    const load = vi.spyOn(store, 'snapshots').mockImplementation((requests, cap) => {
      loaded.push(...requests.map((r) => `${r.subject.kind}:${r.subject.id}`));
      return original(requests, cap);
    });
    const news = vi.spyOn(store, 'recordedSince');
    try {
      // m7 (just judged) made a1, a2, p1 and p2 held: a movement between them reads what is new only.
      await world.movement({ id: 'm8', from: ['a2', 'p2'], to: ['a1', 'p1'], value: 10_000, at: '2026-08-28T11:00:00Z' });
      await world.settle();
      expect(news).toHaveBeenCalled();
      expect(loaded.filter((s) => ['account:a1', 'account:a2', 'party:p1', 'party:p2'].includes(s))).toEqual([]);
    } finally {
      load.mockRestore();
      news.mockRestore();
    }
  });
});

// Runs last: every event the detect pipeline enqueued, swept from the outbox.
it('every event the detect pipeline enqueued parses with its type\'s declared payload', async () => {
  const swept = await sweepOutbox(db());
  expect(swept.refused).toEqual([]);
  expect(swept.types).toEqual(expect.arrayContaining(['alert.opened', 'episode.updated', 'episode.escalated', 'coverage.degraded', 'coverage.recovered', 'risk_state.changed', 'conformance.drift_detected']));
});
