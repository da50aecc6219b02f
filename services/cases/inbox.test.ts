// The case inbox row of an episode, as refreshCaseInbox writes it and as a case action keeps it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/config.ts';
import { openGraphStore } from '../../platform/engines.ts';
import { uuidv7 } from '../../platform/ids.ts';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { refreshCaseInbox, redateOpenCases } from './inbox.ts';
import { applyCaseAction } from './actions.ts';
import { assignEpisodes } from '../../pipelines/detect/episodes.ts';

let db: TestDatabase;
const T0 = new Date('2026-09-01T12:00:00Z');

beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
});
afterAll(async () => db?.drop());

// An episode with one live alert per evidence (its headline evidence), plus a shadow alert.
async function seed(severity: string, evidences: Array<Record<string, unknown>>): Promise<string> {
  const episodeId = uuidv7(T0.getTime());
  await db.pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, created_at, updated_at)
     VALUES ('acme', $1, 'open', $2, $3, $3, $4, 'open', $3, $3)`,
    [episodeId, severity, T0, evidences.length],
  );
  const alerts = evidences.map((evidence, i) => ({ evidence, mode: 'live', typology: i % 2 ? 'fan_in' : 'structuring' }));
  alerts.push({ evidence: { amounts: { total: '999999999', asset: 'USD' } }, mode: 'shadow', typology: 'shadowed' });
  for (const alert of alerts) {
    const alertId = uuidv7(T0.getTime());
    await db.pool.query(
      `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id,
                           window_from, window_to, score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
       VALUES ('acme', $1, $2, 1, $3, 1, $3, 'party', 'p1', 'p1', $4, $4, 0.5, $5, 'open', 's', 'e', 1, $6, $4, $4)`,
      [alertId, alert.mode, alert.typology, T0, severity, episodeId],
    );
    // An older, weaker entry first: the headline is the entry with the alert's score and severity.
    await db.pool.query(
      `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence)
       VALUES ('acme', $1, 1, $2, $2, 0.1, 'low', '{"amounts":{"total":"123456789012","asset":"USD"}}'), ('acme', $1, 2, $2, $2, 0.5, $3, $4)`,
      [alertId, T0, severity, JSON.stringify(alert.evidence)],
    );
  }
  await refreshCaseInbox(db.pool, 'acme', [episodeId]);
  return episodeId;
}

const row = async (episodeId: string) =>
  (
    await db.pool.query(
      `SELECT open, case_status, priority, due_at, amount_value::text AS amount, amount_asset, typologies FROM case_inbox WHERE tenant_id = 'acme' AND episode_id = $1`,
      [episodeId],
    )
  ).rows[0];

describe('the case inbox row', () => {
  it('holds the largest headline amount in the base asset of the live alerts, their typologies, the priority and the due date', async () => {
    const id = await seed('high', [
      { amounts: { total: '1500', asset: 'USD' } },
      { amounts: { total: '250000', asset: 'USD' } },
      { amounts: { total: '900000', asset: 'EUR' } },
      { amounts: { total: '12.5', asset: 'USD' } },
    ]);
    expect(await row(id)).toEqual({
      open: true,
      case_status: 'open',
      priority: 3,
      due_at: new Date('2026-09-08T12:00:00Z'),
      amount: '250000',
      amount_asset: 'USD',
      typologies: ['fan_in', 'structuring'],
    });
  });

  it('has no amount when no alert states one in the base asset', async () => {
    const id = await seed('low', [{ movements: [] }]);
    expect(await row(id)).toMatchObject({ amount: null, amount_asset: null, priority: 1 });
  });

  it('follows a case action: closed cases leave the open work and have no due date', async () => {
    const id = await seed('critical', [{ amounts: { total: '10', asset: 'USD' } }]);
    const outcome = await applyCaseAction(db.pool, { tenantId: 'acme', episodeId: id, disposition: 'false_positive', actor: 'test' }, new Date('2026-09-02T00:00:00Z'));
    expect(outcome.kind).toBe('applied');
    expect(await row(id)).toMatchObject({ open: false, case_status: 'closed', due_at: null });
    await applyCaseAction(db.pool, { tenantId: 'acme', episodeId: id, status: 'investigating', actor: 'test' }, new Date('2026-09-03T00:00:00Z'));
    expect(await row(id)).toMatchObject({ open: true, case_status: 'investigating', due_at: new Date('2026-09-03T12:00:00Z') });
  });

  it('moves due dates of open cases when the SLA changes, and only theirs', async () => {
    const open = await seed('medium', [{}]);
    const closed = await seed('medium', [{}]);
    await applyCaseAction(db.pool, { tenantId: 'acme', episodeId: closed, disposition: 'inconclusive', actor: 'test' }, T0);
    await redateOpenCases(db.pool, 'acme', { critical: 1, high: 2, medium: 3, low: 4 });
    expect((await row(open))!.due_at).toEqual(new Date('2026-09-01T15:00:00Z'));
    expect((await row(closed))!.due_at).toBeNull();
  });
});

describe('detection', () => {
  it('writes the inbox row of the episode an alert opens, and rewrites it when another joins', async () => {
    const graph = await openGraphStore({ ...loadConfig({}), SVC_GRAPH_STORE: 'postgres' }, db.pool);
    const alert = async (typology: string, total: string, at: Date) => {
      const alertId = uuidv7(at.getTime());
      await db.pool.query(
        `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id,
                             window_from, window_to, score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
         VALUES ('acme', $1, 'live', 1, $2, 1, $2, 'account', 'acct-9', 'p9', $3, $3, 0.5, 'medium', 'open', 's', 'e', 1, NULL, $3, $3)`,
        [alertId, typology, at],
      );
      await db.pool.query(`INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence) VALUES ('acme', $1, 1, $2, $2, 0.5, 'medium', $3)`, [
        alertId,
        at,
        JSON.stringify({ amounts: { total, asset: 'USD' } }),
      ]);
      const opened = { alertId, tenantId: 'acme', subject: { kind: 'account' as const, id: 'acct-9' }, partyId: 'p9', severity: 'medium' as const, eventAt: at, counterparties: [] };
      await withTransaction(db.pool, (client) => assignEpisodes(client, graph.value, [opened], at));
      return (await db.pool.query<{ episode_id: string }>('SELECT episode_id FROM alerts WHERE tenant_id = $1 AND alert_id = $2', ['acme', alertId])).rows[0]!.episode_id;
    };
    const first = await alert('fan_in', '700', new Date('2026-09-05T00:00:00Z'));
    expect(await row(first)).toMatchObject({ open: true, priority: 2, amount: '700', typologies: ['fan_in'] });
    const second = await alert('structuring', '900', new Date('2026-09-05T01:00:00Z'));
    expect(second).toBe(first);
    expect(await row(first)).toMatchObject({ amount: '900', typologies: ['fan_in', 'structuring'] });
    const subjects = await db.pool.query(`SELECT subjects, subject_count, alert_count FROM case_inbox WHERE episode_id = $1`, [first]);
    expect(subjects.rows[0]).toEqual({ subjects: [{ kind: 'account', external_id: 'acct-9' }, { kind: 'party', external_id: 'p9' }], subject_count: 2, alert_count: 2 });
    await graph.close();
  });
});
