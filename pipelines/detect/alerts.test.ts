import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import { recordHits, type HitToRecord } from './alerts.ts';
import { defineDetector, noHit, type Severity } from './framework/detector.ts';

// recordHits reads the alert every hit would update in one statement; hits of one detector on one
// subject in the same call must still see what the earlier ones wrote.
const detector = defineDetector({
  id: 'probe',
  typology: 'probe',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [],
  windows: ['24h'],
  params: z.strictObject({}),
  evaluate: async () => noHit(),
});

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
