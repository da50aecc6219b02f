import { afterAll, beforeAll, expect, it } from 'vitest';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { ALERT_COLUMNS } from '../../services/cases/store.ts';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import { recordHits, type HitToRecord } from './alerts.ts';
import type { Severity } from '../../services/detection/framework/detector.ts';
import { probeDetector } from './probe-detector.test-kit.ts';

// recordHits reads the alert every hit would update in one statement; hits of one detector on one
// subject in the same call must still see what the earlier ones wrote.
const detector = probeDetector('probe');

let world: DetectionWorld;
beforeAll(async () => {
  world = await startDetectionWorld();
});
afterAll(async () => world?.close());

const hitOn = (subject: string, from: string, to: string, movements: string[], severity: Severity = 'medium'): HitToRecord => ({
  tenantId: world.api.tenantId,
  mode: 'live',
  rulesetVersion: 1,
  detector,
  subject: { kind: 'account', id: subject },
  partyId: null,
  hit: {
    outcome: 'hit',
    score: 0.5,
    severity,
    summary: 'probe',
    evidence: {
      movements,
      counterparties: [],
      amounts: { total: '1', count: movements.length, asset: 'USD' },
      window: { from: `2026-03-01T${from}Z`, to: `2026-03-01T${to}Z` },
      thresholds: [],
    },
  },
  explanation: 'probe',
  eventAt: new Date(`2026-03-01T${to}Z`),
});

const record = (hits: HitToRecord[]) => withTransaction(world.api.db.pool, (db) => recordHits(db, hits, new Date('2026-03-02T00:00:00Z')));
const alertsOf = async (subject: string) =>
  (
    await world.api.db.pool.query(
      `SELECT a.window_from, a.window_to, a.severity, a.hits, (SELECT count(*)::int FROM alert_evidence e WHERE e.alert_id = a.alert_id) AS evidence
         FROM alerts a WHERE a.tenant_id = $1 AND a.subject_id = $2 ORDER BY a.window_from`,
      [world.api.tenantId, subject],
    )
  ).rows.map((r) => ({ from: r.window_from.toISOString().slice(11, 19), to: r.window_to.toISOString().slice(11, 19), severity: r.severity, hits: r.hits, evidence: r.evidence }));

it('extends, in the same call, the alert an earlier hit of the call opened, and opens one for a hit past it', async () => {
  const result = await record([
    hitOn('A-1', '10:00:00', '10:20:00', ['m1']),
    hitOn('A-1', '10:10:00', '10:40:00', ['m1', 'm2'], 'high'),
    hitOn('A-2', '10:00:00', '10:05:00', ['m9']),
    hitOn('A-1', '11:00:00', '11:10:00', ['m5']),
  ]);
  expect(result.opened).toHaveLength(3);
  expect(result.updated).toBe(1);
  expect(await alertsOf('A-1')).toEqual([
    { from: '10:00:00', to: '10:40:00', severity: 'high', hits: 2, evidence: 2 },
    { from: '11:00:00', to: '11:10:00', severity: 'medium', hits: 1, evidence: 1 },
  ]);
  expect(await alertsOf('A-2')).toEqual([{ from: '10:00:00', to: '10:05:00', severity: 'medium', hits: 1, evidence: 1 }]);
});

it('adds nothing for facts the alert already holds, in a later call or later in the same one', async () => {
  const result = await record([hitOn('A-1', '10:05:00', '10:30:00', ['m2']), hitOn('A-2', '10:00:00', '10:05:00', ['m9']), hitOn('A-2', '10:01:00', '10:05:00', ['m9', 'm10'])]);
  expect(result).toMatchObject({ opened: [], updated: 1 });
  expect((await alertsOf('A-1'))[0]).toMatchObject({ hits: 2, evidence: 2 });
  expect(await alertsOf('A-2')).toEqual([{ from: '10:00:00', to: '10:05:00', severity: 'medium', hits: 2, evidence: 2 }]);
});

it('widens and opens several alerts in one call, each with its own window, severity and evidence', async () => {
  await record([hitOn('B-1', '09:00:00', '09:10:00', ['b1']), hitOn('B-2', '09:00:00', '09:10:00', ['b2'])]);
  const result = await record([
    hitOn('B-1', '09:05:00', '09:30:00', ['b1', 'b3'], 'high'),
    hitOn('B-3', '09:00:00', '09:01:00', ['b9'], 'critical'),
    hitOn('B-2', '08:50:00', '09:10:00', ['b2', 'b4'], 'low'),
  ]);
  expect(result.updated).toBe(2);
  expect(result.opened.map((o) => [o.subject.id, o.severity])).toEqual([['B-3', 'critical']]);
  expect(await alertsOf('B-1')).toEqual([{ from: '09:00:00', to: '09:30:00', severity: 'high', hits: 2, evidence: 2 }]);
  // Severity is never lowered by a later, milder hit.
  expect(await alertsOf('B-2')).toEqual([{ from: '08:50:00', to: '09:10:00', severity: 'medium', hits: 2, evidence: 2 }]);
  expect(await alertsOf('B-3')).toEqual([{ from: '09:00:00', to: '09:01:00', severity: 'critical', hits: 1, evidence: 1 }]);
  const { rows } = await world.api.db.pool.query(
    `SELECT a.subject_id, e.seq, e.severity, e.evidence->'movements' AS movements FROM alert_evidence e JOIN alerts a USING (tenant_id, alert_id)
      WHERE a.tenant_id = $1 AND a.subject_id LIKE 'B-%' ORDER BY a.subject_id, e.seq`,
    [world.api.tenantId],
  );
  expect(rows).toEqual([
    { subject_id: 'B-1', seq: 1, severity: 'medium', movements: ['b1'] },
    { subject_id: 'B-1', seq: 2, severity: 'high', movements: ['b1', 'b3'] },
    { subject_id: 'B-2', seq: 1, severity: 'medium', movements: ['b2'] },
    { subject_id: 'B-2', seq: 2, severity: 'low', movements: ['b2', 'b4'] },
    { subject_id: 'B-3', seq: 1, severity: 'critical', movements: ['b9'] },
  ]);
});

// The reported case: a hit recorded later but earlier in event time, and weaker, extends an alert.
// The alert kept the strong hit's score and severity but showed the weak one's summary and
// explanation ("high 0.80" over "medium, score 0.59").
it('keeps headline, explanation and evidence of one hit when a weaker, earlier hit extends the alert', async () => {
  const strong = hitOn('C-1', '12:00:00', '12:30:00', ['c1', 'c2']);
  strong.hit = { ...strong.hit, score: 0.8, severity: 'high', summary: 'strong hit' };
  strong.explanation = 'high, score 0.80';
  const weak = hitOn('C-1', '11:50:00', '12:10:00', ['c0', 'c1']);
  weak.hit = { ...weak.hit, score: 0.59, severity: 'medium', summary: 'weak hit' };
  weak.explanation = 'medium, score 0.59';
  weak.eventAt = new Date('2026-03-01T12:10:00Z');
  await record([strong]);
  const result = await record([weak]);
  expect(result.updated).toBe(1);

  const read = async () =>
    (await world.api.db.pool.query(`SELECT ${ALERT_COLUMNS} FROM alerts a WHERE a.tenant_id = $1 AND a.subject_id = 'C-1'`, [world.api.tenantId])).rows.map((row) => ({
      severity: row.severity,
      score: row.score,
      summary: row.summary,
      explanation: row.explanation,
      movements: row.evidence.movements,
      from: row.window_from.toISOString().slice(11, 19),
      hits: row.hits,
    }));
  // The window takes the weak hit in, its facts are kept in the history, but the alert reads as the strong hit.
  expect(await read()).toEqual([{ severity: 'high', score: 0.8, summary: 'strong hit', explanation: 'high, score 0.80', movements: ['c1', 'c2'], from: '11:50:00', hits: 2 }]);

  // A stronger hit, later in event time, takes the headline with its own words and evidence.
  const stronger = hitOn('C-1', '12:20:00', '12:40:00', ['c2', 'c3'], 'critical');
  stronger.hit = { ...stronger.hit, score: 0.9, summary: 'stronger hit' };
  stronger.explanation = 'critical, score 0.90';
  await record([stronger]);
  expect(await read()).toEqual([{ severity: 'critical', score: 0.9, summary: 'stronger hit', explanation: 'critical, score 0.90', movements: ['c2', 'c3'], from: '11:50:00', hits: 3 }]);
});

const headlineOf = async (subject: string) =>
  (await world.api.db.pool.query(`SELECT ${ALERT_COLUMNS} FROM alerts a WHERE a.tenant_id = $1 AND a.subject_id = $2`, [world.api.tenantId, subject])).rows.map((row) => ({
    summary: row.summary,
    explanation: row.explanation,
    movements: row.evidence.movements,
    hits: row.hits,
  }));

// The same facts in another order: a hit as strong as the headline but judged at an earlier
// instant (a late fact judged at its own time) is an older picture of the subject. It used to take
// the headline for being recorded later, so the alert's words and evidence depended on arrival order.
it('keeps the later picture as headline when a hit as strong but judged earlier is recorded after it', async () => {
  const tie = (subject: string, to: string, movements: string[], summary: string) => {
    const entry = hitOn(subject, '13:00:00', to, movements);
    entry.hit = { ...entry.hit, score: 0.66, severity: 'medium', summary };
    entry.explanation = `${summary}, medium, score 0.66`;
    return entry;
  };
  const later = (subject: string) => tie(subject, '14:00:00', ['d2', 'd3'], 'picture at 14:00');
  const earlier = (subject: string) => tie(subject, '13:30:00', ['d1', 'd2'], 'picture at 13:30');
  const headline = { summary: 'picture at 14:00', explanation: 'picture at 14:00, medium, score 0.66', movements: ['d2', 'd3'], hits: 2 };

  // In event-time order, and the later picture recorded first: one call each, or both in one call.
  await record([earlier('D-1')]);
  await record([later('D-1')]);
  await record([later('D-2')]);
  await record([earlier('D-2')]);
  await record([later('D-3'), earlier('D-3')]);
  for (const subject of ['D-1', 'D-2', 'D-3']) expect(await headlineOf(subject)).toEqual([headline]);

  // A tie judged at the same instant is the newer judgement of that picture: it takes the headline.
  const again = tie('D-2', '14:00:00', ['d3', 'd4'], 'picture at 14:00, judged again');
  await record([again]);
  expect((await headlineOf('D-2'))[0]).toMatchObject({ summary: 'picture at 14:00, judged again', movements: ['d3', 'd4'], hits: 3 });
});

// Alerts written before the alert named its headline row (migration 0057) keep the headline the
// old rule finds, and a hit that does not outrank it names that row rather than its own.
it('names the old headline row of an alert written before headline_seq when a weaker hit extends it', async () => {
  const first = hitOn('E-1', '15:00:00', '15:30:00', ['e1']);
  first.hit = { ...first.hit, score: 0.7, severity: 'high', summary: 'first' };
  first.explanation = 'first';
  await record([first]);
  await world.api.db.pool.query(`UPDATE alerts SET headline_seq = NULL WHERE tenant_id = $1 AND subject_id = 'E-1'`, [world.api.tenantId]);
  const weaker = hitOn('E-1', '15:10:00', '15:40:00', ['e2']);
  weaker.hit = { ...weaker.hit, score: 0.7, severity: 'high', summary: 'earlier picture' };
  weaker.eventAt = new Date('2026-03-01T15:20:00Z');
  await record([weaker]);
  expect(await headlineOf('E-1')).toEqual([{ summary: 'first', explanation: 'first', movements: ['e1'], hits: 2 }]);
  const { rows } = await world.api.db.pool.query(`SELECT headline_seq FROM alerts WHERE tenant_id = $1 AND subject_id = 'E-1'`, [world.api.tenantId]);
  expect(rows).toEqual([{ headline_seq: 1 }]);
});
