import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { applyCaseAction, validateCaseAction, type CaseActionInput } from './actions.ts';
import { sweepOutbox } from '../webhooks/declared-payloads.test-kit.ts';

let db: TestDatabase;
const TENANT = 'acme';
const T0 = new Date('2026-09-01T12:00:00Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

interface Seeded {
  episodeId: string;
  ref: string;
  alerts: string[];
}

// An open episode of severity high with two live alerts on `party` (and one on its account), a
// counterparty member, and the party's posture already at high.
async function seedEpisode(party: string, options: { tenant?: string; status?: string; caseStatus?: string; disposition?: string } = {}): Promise<Seeded> {
  const tenant = options.tenant ?? TENANT;
  const episodeId = uuidv7(T0.getTime());
  await db.pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, disposition, created_at, updated_at)
     VALUES ($1, $2, $3, 'high', '2026-08-01T00:00:00Z', '2026-08-02T00:00:00Z', 2, $4, $5, $6, $6)`,
    [tenant, episodeId, options.status ?? 'open', options.caseStatus ?? 'open', options.disposition ?? null, T0],
  );
  const members: Array<[string, string, string]> = [
    ['party', party, 'subject'],
    ['account', `${party}-acct`, 'subject'],
    ['party', `${party}-cp`, 'counterparty'],
  ];
  for (const [kind, id, role] of members) {
    await db.pool.query(
      'INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [tenant, episodeId, kind, id, role, T0],
    );
  }
  const alerts: string[] = [];
  for (const [kind, id] of [['party', party], ['account', `${party}-acct`]] as const) {
    const alertId = uuidv7(T0.getTime());
    alerts.push(alertId);
    await db.pool.query(
      `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id,
                           window_from, window_to, score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
       VALUES ($1, $2, 'live', 0, 'structuring', 1, 'Structuring', $3, $4, $5, '2026-07-30T00:00:00Z', '2026-08-01T00:00:00Z', 0.8, 'high',
               $6, 's', 'e', 1, $7, $8, $8)`,
      [tenant, alertId, kind, id, party, options.status === 'resolved' ? 'closed' : 'open', episodeId, T0],
    );
  }
  await db.pool.query(
    `INSERT INTO party_postures (tenant_id, party_id, band, computed_at, evaluated_at) VALUES ($1, $2, $3, $4, $4)`,
    [tenant, party, options.status === 'resolved' ? 'low' : 'high', T0],
  );
  return { episodeId, ref: `epsd_${episodeId}`, alerts };
}

const act = (seeded: Seeded, action: Omit<CaseActionInput, 'tenantId' | 'episodeId' | 'actor'> & { actor?: string }, now: Date) =>
  applyCaseAction(db.pool, { tenantId: TENANT, episodeId: seeded.ref, actor: 'svc_test_analyst', ...action }, now);

async function episodeRow(seeded: Seeded) {
  const { rows } = await db.pool.query('SELECT status, case_status, disposition, updated_at FROM episodes WHERE tenant_id = $1 AND episode_id = $2', [
    TENANT,
    seeded.episodeId,
  ]);
  return rows[0];
}

async function caseActions(seeded: Seeded) {
  const { rows } = await db.pool.query(
    'SELECT seq, at, actor, case_status, disposition, note FROM case_actions WHERE tenant_id = $1 AND episode_id = $2 ORDER BY seq',
    [TENANT, seeded.episodeId],
  );
  return rows;
}

async function alertStatuses(seeded: Seeded): Promise<string[]> {
  const { rows } = await db.pool.query('SELECT status FROM alerts WHERE tenant_id = $1 AND alert_id = ANY($2::uuid[])', [TENANT, seeded.alerts]);
  return rows.map((r) => r.status);
}

// The events enqueued, in the order the action returned their envelopes.
async function events(envelopes: string[]): Promise<Array<{ type: string; classification: string; data: Record<string, unknown> }>> {
  const ids = envelopes.map((e) => e.slice('whe_'.length));
  const { rows } = await db.pool.query('SELECT envelope_id, type, classification, data FROM outgoing_events WHERE envelope_id = ANY($1::uuid[])', [ids]);
  return ids.map((id) => rows.find((r) => r.envelope_id === id)).map(({ type, classification, data }) => ({ type, classification, data }));
}

async function eventCount(): Promise<number> {
  const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM outgoing_events WHERE tenant_id = $1', [TENANT]);
  return rows[0].n;
}

async function band(party: string): Promise<string | undefined> {
  const { rows } = await db.pool.query('SELECT band FROM party_postures WHERE tenant_id = $1 AND party_id = $2', [TENANT, party]);
  return rows[0]?.band;
}

describe('validateCaseAction', () => {
  it.each([
    [{}, 'status'],
    [{ status: 'closed' }, 'disposition'],
    [{ status: 'investigating', disposition: 'false_positive' }, 'status'],
    [{ status: 'escalated', disposition: 'no_further_action' }, 'status'],
    [{ status: 'pending' }, 'status'],
    [{ disposition: 'guilty' }, 'disposition'],
    [{ status: 'open', note: 'x'.repeat(2001) }, 'note'],
    [{ status: 'open', note: 42 }, 'note'],
    [{ status: 'open', assignee: 'bob' }, 'assignee'],
  ])('refuses %j at %s', (body, path) => {
    const checked = validateCaseAction(body);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.errors.map((e) => e.path)).toContain(path);
    if (!checked.ok) expect(checked.errors.every((e) => e.code === 'svc:validation/schema')).toBe(true);
  });

  it('refuses a body that is not an object, and takes the valid combinations', () => {
    expect(validateCaseAction(['open']).ok).toBe(false);
    expect(validateCaseAction(null).ok).toBe(false);
    for (const body of [{ status: 'open' }, { status: 'investigating', note: 'x'.repeat(2000) }, { disposition: 'inconclusive' }, { status: 'closed', disposition: 'false_positive' }]) {
      expect(validateCaseAction(body).ok, JSON.stringify(body)).toBe(true);
    }
  });
});

describe('applyCaseAction', () => {
  it('refuses invalid actions and unknown episodes without writing anything', async () => {
    const seeded = await seedEpisode('inv-1');
    const before = await eventCount();
    expect(await act(seeded, { status: 'closed' }, at(1))).toMatchObject({ kind: 'invalid', errors: [{ path: 'disposition' }] });
    expect(await act(seeded, { status: 'investigating', disposition: 'false_positive' }, at(1))).toMatchObject({ kind: 'invalid' });
    expect(await act(seeded, {}, at(1))).toMatchObject({ kind: 'invalid' });
    expect(await act({ ...seeded, ref: `epsd_${uuidv7()}` }, { status: 'investigating' }, at(1))).toEqual({ kind: 'not_found' });
    expect(await act({ ...seeded, ref: 'epsd_nope' }, { status: 'investigating' }, at(1))).toEqual({ kind: 'not_found' });
    // Another tenant's episode is unknown here.
    const foreign = await seedEpisode('inv-foreign', { tenant: 'other' });
    expect(await act(foreign, { status: 'investigating' }, at(1))).toEqual({ kind: 'not_found' });
    expect(await caseActions(seeded)).toEqual([]);
    expect((await episodeRow(seeded)).case_status).toBe('open');
    expect(await eventCount()).toBe(before);
  });

  it('a disposition closes the case, resolves the episode, closes its alerts and lowers the subjects\' posture', async () => {
    const seeded = await seedEpisode('disp-1');
    const outcome = await act(seeded, { disposition: 'suspicious_activity_reported', note: 'SAR filed 2026-09-01' }, at(5));
    expect(outcome).toMatchObject({
      kind: 'applied',
      changed: true,
      episode: { episodeId: seeded.episodeId, status: 'resolved', caseStatus: 'closed', disposition: 'suspicious_activity_reported' },
    });
    expect(await episodeRow(seeded)).toEqual({ status: 'resolved', case_status: 'closed', disposition: 'suspicious_activity_reported', updated_at: at(5) });
    expect(await alertStatuses(seeded)).toEqual(['closed', 'closed']);
    expect(await caseActions(seeded)).toEqual([
      { seq: 1, at: at(5), actor: 'svc_test_analyst', case_status: 'closed', disposition: 'suspicious_activity_reported', note: 'SAR filed 2026-09-01' },
    ]);
    // The subject party had nothing else unresolved; its counterparty is not a subject and gets no posture.
    expect(await band('disp-1')).toBe('low');
    expect(await band('disp-1-cp')).toBeUndefined();

    if (outcome.kind !== 'applied') throw new Error('not applied');
    const sent = await events(outcome.envelopes);
    expect(sent.map((e) => e.type)).toEqual(['case.status_changed', 'case.disposed', 'episode.resolved', 'risk_state.changed']);
    expect(sent.slice(0, 3).every((e) => e.classification === 'restricted_aml')).toBe(true);
    expect(sent[0]!.data).toEqual({
      episode_id: seeded.ref,
      status: 'resolved',
      previous_status: 'open',
      case_status: 'closed',
      previous_case_status: 'open',
      disposition: 'suspicious_activity_reported',
      previous_disposition: null,
      severity: 'high',
      alert_count: 2,
      case_action_seq: 1,
      // case.status_changed has another cause (a new alert reopens the case): the reason says which.
      reason: 'case_action',
    });
    const { reason: _, ...disposed } = sent[0]!.data;
    expect(sent[1]!.data).toEqual(disposed);
    expect(sent[3]!.data).toMatchObject({ subject: { kind: 'party', external_id: 'disp-1' }, band: 'low', previous_band: 'high' });
  });

  it('setting what is already set changes nothing and enqueues nothing', async () => {
    const seeded = await seedEpisode('idem-1');
    expect(await act(seeded, { status: 'closed', disposition: 'false_positive' }, at(1))).toMatchObject({ kind: 'applied', changed: true });
    const before = await eventCount();
    for (const action of [{ disposition: 'false_positive' }, { status: 'closed', disposition: 'false_positive' }]) {
      expect(await act(seeded, action, at(2))).toMatchObject({ kind: 'applied', changed: false, envelopes: [], episode: { status: 'resolved', caseStatus: 'closed' } });
    }
    expect(await caseActions(seeded)).toHaveLength(1);
    expect((await episodeRow(seeded)).updated_at).toEqual(at(1));
    expect(await eventCount()).toBe(before);

    const open = await seedEpisode('idem-2');
    expect(await act(open, { status: 'open' }, at(1))).toMatchObject({ kind: 'applied', changed: false });
    expect(await act(open, { status: 'investigating' }, at(2))).toMatchObject({ changed: true });
    expect(await act(open, { status: 'investigating' }, at(3))).toMatchObject({ changed: false });
    expect((await caseActions(open)).map((a) => a.case_status)).toEqual(['investigating']);
  });

  it('keeps the note of an action that changes nothing, once, and announces nothing', async () => {
    const seeded = await seedEpisode('note-1');
    await act(seeded, { status: 'investigating', note: 'looking' }, at(1));
    const before = await eventCount();
    const noted = { status: 'investigating', note: 'payer confirmed the invoices' };
    for (const minute of [2, 3]) {
      expect(await act(seeded, noted, at(minute))).toMatchObject({ kind: 'applied', changed: false, envelopes: [], episode: { caseStatus: 'investigating' } });
    }
    await act(seeded, { ...noted, actor: 'svc_test_other' }, at(4));
    expect(await caseActions(seeded)).toEqual([
      { seq: 1, at: at(1), actor: 'svc_test_analyst', case_status: 'investigating', disposition: null, note: 'looking' },
      { seq: 2, at: at(2), actor: 'svc_test_analyst', case_status: 'investigating', disposition: null, note: 'payer confirmed the invoices' },
      { seq: 3, at: at(4), actor: 'svc_test_other', case_status: 'investigating', disposition: null, note: 'payer confirmed the invoices' },
    ]);
    expect(await eventCount()).toBe(before);
    expect((await episodeRow(seeded)).updated_at).toEqual(at(1));

    // On a closed case it is kept with the disposition as it stands.
    await act(seeded, { disposition: 'no_further_action', note: 'closing' }, at(5));
    await act(seeded, { disposition: 'no_further_action', note: 'reviewed again by QA' }, at(6));
    expect((await caseActions(seeded)).at(-1)).toMatchObject({ seq: 5, case_status: 'closed', disposition: 'no_further_action', note: 'reviewed again by QA' });
  });

  it('records in the action\'s own transaction: when the record fails, nothing of the action stays', async () => {
    const seeded = await seedEpisode('rec-1');
    const before = await eventCount();
    const failing = applyCaseAction(db.pool, { tenantId: TENANT, episodeId: seeded.ref, actor: 'console:u1', disposition: 'false_positive', note: 'n' }, at(1), async () => {
      throw new Error('audit store away');
    });
    await expect(failing).rejects.toThrow('audit store away');
    expect(await episodeRow(seeded)).toMatchObject({ status: 'open', case_status: 'open', disposition: null });
    expect(await caseActions(seeded)).toEqual([]);
    expect(await eventCount()).toBe(before);

    const seen: Array<{ changed: boolean; envelopes: string[] }> = [];
    const applied = await applyCaseAction(db.pool, { tenantId: TENANT, episodeId: seeded.ref, actor: 'console:u1', status: 'investigating' }, at(2), async (_db, result) => {
      seen.push(result);
    });
    expect(applied).toMatchObject({ kind: 'applied', changed: true });
    expect(seen).toEqual([{ changed: true, envelopes: (applied as { envelopes: string[] }).envelopes }]);
  });

  it('investigating only changes the case status', async () => {
    const seeded = await seedEpisode('inv-2');
    const outcome = await act(seeded, { status: 'investigating', note: 'looking' }, at(1));
    if (outcome.kind !== 'applied') throw new Error('not applied');
    expect((await events(outcome.envelopes)).map((e) => e.type)).toEqual(['case.status_changed']);
    expect(await episodeRow(seeded)).toMatchObject({ status: 'open', case_status: 'investigating', disposition: null });
    expect(await alertStatuses(seeded)).toEqual(['open', 'open']);
    expect(await band('inv-2')).toBe('high');
  });

  it('escalated escalates the episode; going back to investigating keeps it escalated', async () => {
    const seeded = await seedEpisode('esc-1');
    const escalated = await act(seeded, { status: 'escalated' }, at(1));
    if (escalated.kind !== 'applied') throw new Error('not applied');
    const sent = await events(escalated.envelopes);
    expect(sent.map((e) => e.type)).toEqual(['case.status_changed', 'episode.escalated']);
    expect(sent[1]!.data).toMatchObject({ episode_id: seeded.ref, status: 'escalated', previous_status: 'open', reason: 'case_action' });
    expect(await episodeRow(seeded)).toMatchObject({ status: 'escalated', case_status: 'escalated' });

    const back = await act(seeded, { status: 'investigating' }, at(2));
    if (back.kind !== 'applied') throw new Error('not applied');
    expect((await events(back.envelopes)).map((e) => e.type)).toEqual(['case.status_changed']);
    expect(await episodeRow(seeded)).toMatchObject({ status: 'escalated', case_status: 'investigating' });
    expect((await caseActions(seeded)).map((a) => [a.seq, a.case_status])).toEqual([[1, 'escalated'], [2, 'investigating']]);
  });

  it('an episode the pipeline escalated only changes case status when the analyst escalates it', async () => {
    const seeded = await seedEpisode('esc-2', { status: 'escalated' });
    const outcome = await act(seeded, { status: 'escalated' }, at(1));
    if (outcome.kind !== 'applied') throw new Error('not applied');
    expect((await events(outcome.envelopes)).map((e) => e.type)).toEqual(['case.status_changed']);
  });

  it('open or investigating on a resolved episode reopens it, clears the disposition and raises the posture again', async () => {
    const seeded = await seedEpisode('reopen-1');
    await act(seeded, { disposition: 'no_further_action' }, at(1));
    expect(await band('reopen-1')).toBe('low');
    const outcome = await act(seeded, { status: 'investigating', note: 'new information' }, at(2));
    expect(outcome).toMatchObject({ kind: 'applied', changed: true, episode: { status: 'reopened', caseStatus: 'investigating', disposition: null } });
    if (outcome.kind !== 'applied') throw new Error('not applied');
    const sent = await events(outcome.envelopes);
    expect(sent.map((e) => e.type)).toEqual(['case.status_changed', 'episode.reopened', 'risk_state.changed', 'recommendation.issued']);
    expect(sent[1]!.data).toMatchObject({ status: 'reopened', previous_status: 'resolved', disposition: null, previous_disposition: 'no_further_action', reason: 'case_action' });
    expect(sent[2]!.data).toMatchObject({ band: 'high', previous_band: 'low', episode_id: seeded.ref });
    // The operational recommendation is sanitised by services/detection/posture.ts: no typology, detector or narrative.
    expect(sent[3]).toMatchObject({ classification: 'advisory' });
    expect(await episodeRow(seeded)).toMatchObject({ status: 'reopened', case_status: 'investigating', disposition: null });
    // The alerts were reviewed and stay closed, as when the pipeline reopens an episode.
    expect(await alertStatuses(seeded)).toEqual(['closed', 'closed']);
    expect((await caseActions(seeded)).map((a) => [a.seq, a.case_status, a.disposition, a.note])).toEqual([
      [1, 'closed', 'no_further_action', null],
      [2, 'investigating', null, 'new information'],
    ]);
  });

  it('escalating a resolved episode reopens and escalates it', async () => {
    const seeded = await seedEpisode('reopen-2', { status: 'resolved', caseStatus: 'closed', disposition: 'inconclusive' });
    const outcome = await act(seeded, { status: 'escalated' }, at(1));
    if (outcome.kind !== 'applied') throw new Error('not applied');
    expect((await events(outcome.envelopes)).map((e) => e.type).slice(0, 3)).toEqual(['case.status_changed', 'episode.reopened', 'episode.escalated']);
    expect(await episodeRow(seeded)).toMatchObject({ status: 'escalated', case_status: 'escalated', disposition: null });
  });

  it('a new disposition on a closed case replaces the old one and is announced once more', async () => {
    const seeded = await seedEpisode('redisp-1');
    await act(seeded, { disposition: 'inconclusive' }, at(1));
    const outcome = await act(seeded, { disposition: 'suspicious_activity_reported' }, at(2));
    if (outcome.kind !== 'applied') throw new Error('not applied');
    const sent = await events(outcome.envelopes);
    expect(sent.map((e) => e.type)).toEqual(['case.disposed']);
    expect(sent[0]!.data).toMatchObject({ disposition: 'suspicious_activity_reported', previous_disposition: 'inconclusive', case_action_seq: 2 });
    expect(await episodeRow(seeded)).toMatchObject({ status: 'resolved', disposition: 'suspicious_activity_reported' });
  });

  it('serialises concurrent actions on one episode: every applied action gets the next seq', async () => {
    const seeded = await seedEpisode('conc-1');
    const outcomes = await Promise.all([
      act(seeded, { status: 'investigating', actor: 'a' }, at(1)),
      act(seeded, { status: 'escalated', actor: 'b' }, at(1)),
      act(seeded, { disposition: 'false_positive', actor: 'c' }, at(1)),
    ]);
    expect(outcomes.every((o) => o.kind === 'applied' && o.changed)).toBe(true);
    expect((await caseActions(seeded)).map((a) => a.seq)).toEqual([1, 2, 3]);
  });
});

// Runs last: every event the actions above enqueued, swept from the outbox.
it('every event the case actions enqueued parses with its type\'s declared payload', async () => {
  const swept = await sweepOutbox(db.pool);
  expect(swept.refused).toEqual([]);
  expect(swept.types).toEqual(expect.arrayContaining(['case.disposed', 'case.status_changed', 'episode.escalated', 'episode.reopened', 'episode.resolved', 'risk_state.changed']));
});
