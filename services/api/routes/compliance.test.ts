import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { uuidv7 } from '../../../platform/ids.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { problemSchema } from '../../../schemas/problem.ts';
import { alertDetailSchema, alertPageSchema, episodeDetailSchema, episodePageSchema } from '../../../schemas/responses.ts';
import type { Credential } from '../../../test/support/signing-client.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';

let api: TestApi;
let otherKey: Credential;
const BULK_ALERTS = 23;
const BULK_EPISODES = 12;
const ids = {} as Record<'e1' | 'e2' | 'a1' | 'a2' | 'a3' | 'shadow' | 'otherAlert' | 'otherEpisode', string>;

interface AlertSeed {
  subject: ['account' | 'party', string];
  party?: string;
  detector?: string;
  status?: 'open' | 'closed';
  mode?: 'live' | 'shadow';
  createdAt: string;
  episodeId?: string;
  evidence?: Array<Record<string, unknown>>;
}

// Alerts and episodes are written by the detection pipeline; here they are seeded directly.
async function insertAlert(tenant: string, seed: AlertSeed): Promise<string> {
  const id = uuidv7(Date.parse(seed.createdAt));
  const [kind, subject] = seed.subject;
  await api.db.pool.query(
    `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id,
                         window_from, window_to, score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
     VALUES ($1, $2, $3, 3, $4, 2, 'Some typology', $5, $6, $7, '2026-06-01T00:00:00Z', '2026-06-08T00:00:00Z', 0.75, 'high', $8,
             'Twelve deposits just under the reporting threshold', 'Why this detector fired', $9, $10, $11, $11)`,
    [tenant, id, seed.mode ?? 'live', seed.detector ?? 'structuring', kind, subject, seed.party ?? (kind === 'party' ? subject : null), seed.status ?? 'open',
      (seed.evidence ?? [{}]).length, seed.episodeId ?? null, seed.createdAt],
  );
  for (const [i, evidence] of (seed.evidence ?? [{ movements: ['m-1'] }]).entries()) {
    await api.db.pool.query(
      `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence)
       VALUES ($1, $2, $3, $4, '2026-06-08T00:00:00Z', $5, 'high', $6)`,
      [tenant, id, i + 1, seed.createdAt, 0.5 + i / 10, JSON.stringify(evidence)],
    );
  }
  return id;
}

async function insertEpisode(
  tenant: string,
  seed: { status?: string; caseStatus?: string; disposition?: string; updatedAt: string; members: Array<[string, string, string]> },
): Promise<string> {
  const id = uuidv7(Date.parse(seed.updatedAt));
  await api.db.pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, disposition, created_at, updated_at)
     VALUES ($1, $2, $3, 'high', '2026-06-01T00:00:00Z', '2026-06-08T00:00:00Z', 2, $4, $5, '2026-06-09T00:00:00Z', $6)`,
    [tenant, id, seed.status ?? 'open', seed.caseStatus ?? 'open', seed.disposition ?? null, seed.updatedAt],
  );
  for (const [kind, subject, role] of seed.members) {
    await api.db.pool.query(
      'INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [tenant, id, kind, subject, role, seed.updatedAt],
    );
  }
  return id;
}

const minutesAfter = (start: string, minutes: number) => new Date(Date.parse(start) + minutes * 60_000).toISOString();

beforeAll(async () => {
  api = await startTestApi();
  const acme = api.tenantId;
  ids.e1 = await insertEpisode(acme, {
    updatedAt: '2026-08-10T00:00:00Z',
    members: [['party', 'alice', 'subject'], ['account', 'alice-acct', 'subject'], ['party', 'carol', 'counterparty']],
  });
  ids.a1 = await insertAlert(acme, {
    subject: ['account', 'alice-acct'],
    party: 'alice',
    createdAt: '2026-08-01T10:00:00Z',
    episodeId: ids.e1,
    evidence: [{ movements: ['m-1'], version: 1 }, { movements: ['m-1', 'm-2'], version: 2 }],
  });
  ids.a2 = await insertAlert(acme, { subject: ['party', 'alice'], detector: 'fan_in', createdAt: '2026-08-02T10:00:00Z', episodeId: ids.e1 });
  ids.e2 = await insertEpisode(acme, {
    status: 'resolved',
    caseStatus: 'closed',
    disposition: 'false_positive',
    updatedAt: '2026-08-05T00:00:00Z',
    members: [['party', 'dave', 'subject']],
  });
  ids.a3 = await insertAlert(acme, { subject: ['party', 'dave'], detector: 'fan_in', status: 'closed', createdAt: '2026-08-03T10:00:00Z', episodeId: ids.e2 });
  // The newest alert of all, but from a ruleset in shadow: recorded, never shown.
  ids.shadow = await insertAlert(acme, { subject: ['party', 'alice'], mode: 'shadow', createdAt: '2026-08-04T10:00:00Z' });
  // Several alerts and episodes share one instant, so the order needs its tiebreak.
  for (let i = 0; i < BULK_ALERTS; i++) {
    await insertAlert(acme, { subject: ['party', 'bulk'], detector: 'rapid_movement', createdAt: minutesAfter('2026-07-01T00:00:00Z', Math.floor(i / 3)) });
  }
  for (let i = 0; i < BULK_EPISODES; i++) {
    await insertEpisode(acme, { updatedAt: minutesAfter('2026-07-01T00:00:00Z', Math.floor(i / 2)), members: [['party', 'bulk-ep', 'subject']] });
  }
  await createTenant(api.db.pool, 'other', 'USD');
  otherKey = await api.issue('other', 'compliance');
  ids.otherEpisode = await insertEpisode('other', { updatedAt: '2026-08-11T00:00:00Z', members: [['party', 'alice', 'subject']] });
  ids.otherAlert = await insertAlert('other', { subject: ['party', 'alice'], createdAt: '2026-08-11T00:00:00Z', episodeId: ids.otherEpisode });
});
afterAll(async () => {
  await api?.close();
});

const get = (path: string, key: Credential = api.keys.compliance) => api.client.get(path, key);

async function alertIds(query: string, key?: Credential): Promise<string[]> {
  const res = await get(`/v1/alerts?${query}`, key);
  expect(res.statusCode, res.body).toBe(200);
  return alertPageSchema.parse(res.json()).data.map((a) => a.alert_id);
}

async function episodeIds(query: string, key?: Credential): Promise<string[]> {
  const res = await get(`/v1/episodes?${query}`, key);
  expect(res.statusCode, res.body).toBe(200);
  return episodePageSchema.parse(res.json()).data.map((e) => e.episode_id);
}

// Every page of a list, following next_cursor.
async function allPages<T>(path: string, query: string, pageSchema: z.ZodType<{ data: T[]; has_more: boolean; next_cursor?: string | undefined }>): Promise<T[]> {
  const seen: T[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 100; n++) {
    const res = await get(`${path}?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = pageSchema.parse(res.json());
    seen.push(...body.data);
    if (!body.has_more) {
      expect(body.next_cursor).toBeUndefined();
      return seen;
    }
    cursor = body.next_cursor;
  }
  throw new Error('too many pages');
}

const alrt = (id: string) => `alrt_${id}`;
const epsd = (id: string) => `epsd_${id}`;

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = problemSchema.parse(res.json());
  expect(problem.code).toBe(code);
  return problem;
}

describe('scopes and tenants', () => {
  const reads = () => ['/v1/alerts', `/v1/alerts/${alrt(ids.a1)}`, '/v1/episodes', `/v1/episodes/${epsd(ids.e1)}`];

  it('needs the compliance scope: a read or ingest key gets 403', async () => {
    for (const path of reads()) {
      expect((await get(path)).statusCode, path).toBe(200);
      for (const key of [api.keys.read, api.keys.ingest, api.keys.webhook_mgmt]) expectProblem(await get(path, key), 403, 'svc:auth/insufficient_scope');
    }
    expectProblem(await api.client.post(`/v1/episodes/${epsd(ids.e1)}/case`, { status: 'investigating' }, api.keys.read), 403, 'svc:auth/insufficient_scope');
    expect((await get(`/v1/episodes/${epsd(ids.e1)}`)).json().case_status).toBe('open');
  });

  it('never shows one tenant the alerts or episodes of another', async () => {
    expect(await alertIds('', otherKey)).toEqual([alrt(ids.otherAlert)]);
    expect(await alertIds('subject=alice', otherKey)).toEqual([alrt(ids.otherAlert)]);
    expect(await episodeIds('', otherKey)).toEqual([epsd(ids.otherEpisode)]);
    expectProblem(await get(`/v1/alerts/${alrt(ids.a1)}`, otherKey), 404, 'svc:resource/not_found');
    expectProblem(await get(`/v1/episodes/${epsd(ids.e1)}`, otherKey), 404, 'svc:resource/not_found');
    expectProblem(await api.client.post(`/v1/episodes/${epsd(ids.e1)}/case`, { status: 'escalated' }, otherKey), 404, 'svc:resource/not_found');
    // And the other way round.
    expect(await alertIds('subject=alice')).not.toContain(alrt(ids.otherAlert));
    expectProblem(await get(`/v1/episodes/${epsd(ids.otherEpisode)}`), 404, 'svc:resource/not_found');
    expect((await get(`/v1/episodes/${epsd(ids.e1)}`)).json().case_status).toBe('open');
  });
});

describe('GET /v1/alerts', () => {
  it('lists live alerts newest first, with their latest evidence; shadow alerts never', async () => {
    const body = alertPageSchema.parse((await get('/v1/alerts?limit=4')).json());
    expect(body.data.map((a) => a.alert_id)).toEqual([alrt(ids.a3), alrt(ids.a2), alrt(ids.a1), expect.stringMatching(/^alrt_/)]);
    expect(body.has_more).toBe(true);
    expect(body.data[2]).toEqual({
      alert_id: alrt(ids.a1),
      status: 'open',
      detector: 'structuring',
      detector_version: 2,
      typology: 'Some typology',
      ruleset_version: 3,
      subject: { kind: 'account', external_id: 'alice-acct' },
      party_id: 'alice',
      severity: 'high',
      score: 0.75,
      window: { from: '2026-06-01T00:00:00.000Z', to: '2026-06-08T00:00:00.000Z' },
      summary: 'Twelve deposits just under the reporting threshold',
      explanation: 'Why this detector fired',
      hits: 2,
      episode_id: epsd(ids.e1),
      created_at: '2026-08-01T10:00:00.000Z',
      updated_at: '2026-08-01T10:00:00.000Z',
      evidence: { movements: ['m-1', 'm-2'], version: 2 },
    });
    const everything = await allPages('/v1/alerts', 'limit=200', alertPageSchema);
    expect(everything).toHaveLength(3 + BULK_ALERTS);
    expect(everything.map((a) => a.alert_id)).not.toContain(alrt(ids.shadow));
    expect(await alertIds('subject=alice&limit=200')).toEqual([alrt(ids.a2)]);
  });

  it('filters by status, subject and its kind, detector and creation time', async () => {
    expect(await alertIds('status=closed')).toEqual([alrt(ids.a3)]);
    expect(await alertIds('status=open&subject=alice-acct')).toEqual([alrt(ids.a1)]);
    expect(await alertIds('subject=alice-acct&subject_kind=account')).toEqual([alrt(ids.a1)]);
    expect(await alertIds('subject=alice-acct&subject_kind=party')).toEqual([]);
    expect(await alertIds('subject=alice&subject_kind=party')).toEqual([alrt(ids.a2)]);
    expect(await alertIds('detector=fan_in')).toEqual([alrt(ids.a3), alrt(ids.a2)]);
    expect(await alertIds('detector=fan_in&status=open')).toEqual([alrt(ids.a2)]);
    expect(await alertIds(`since=${encodeURIComponent('2026-08-02T10:00:00Z')}`)).toEqual([alrt(ids.a3), alrt(ids.a2)]);
    expect(await alertIds(`since=${encodeURIComponent('2026-08-02T12:00:00+02:00')}`)).toEqual([alrt(ids.a3), alrt(ids.a2)]);
    expect(await alertIds('detector=nothing')).toEqual([]);
  });

  it('returns every alert exactly once across pages, newest first', async () => {
    const pages = await allPages('/v1/alerts', 'detector=rapid_movement&limit=4', alertPageSchema);
    expect(pages).toHaveLength(BULK_ALERTS);
    expect(new Set(pages.map((a) => a.alert_id)).size).toBe(BULK_ALERTS);
    const created = pages.map((a) => Date.parse(a.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect((await get('/v1/alerts?detector=rapid_movement')).json().data).toHaveLength(BULK_ALERTS);
  });

  it.each([
    ['status=pending', 'status'],
    ['status=open,closed', 'status'],
    ['subject_kind=party', 'subject_kind'],
    ['subject=alice&subject_kind=instrument', 'subject_kind'],
    ['since=2026-08-01', 'since'],
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['cursor=not-a-cursor', 'cursor'],
  ])('answers 400 for %s', async (query, path) => {
    const problem = expectProblem(await get(`/v1/alerts?${query}`), 400, 'svc:request/invalid_parameter');
    expect(problem.errors[0]!.path).toBe(path);
  });

  it('refuses an edited cursor, and a cursor reused with other filters or on another list', async () => {
    const cursor = (await get('/v1/alerts?detector=rapid_movement&limit=5')).json().next_cursor as string;
    const [body, sig] = cursor.split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    payload.o = '2030-01-01 00:00:00+00';
    const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;
    for (const query of [
      `detector=rapid_movement&limit=5&cursor=${encodeURIComponent(forged)}`,
      `detector=fan_in&limit=5&cursor=${encodeURIComponent(cursor)}`,
      `limit=5&cursor=${encodeURIComponent(cursor)}`,
    ]) {
      expect(expectProblem(await get(`/v1/alerts?${query}`), 400, 'svc:request/invalid_parameter').errors[0]!.path).toBe('cursor');
    }
    expectProblem(await get(`/v1/episodes?cursor=${encodeURIComponent(cursor)}`), 400, 'svc:request/invalid_parameter');
    expectProblem(await get(`/v1/alerts?detector=rapid_movement&limit=5&cursor=${encodeURIComponent(cursor)}`, otherKey), 400, 'svc:request/invalid_parameter');
  });
});

describe('GET /v1/alerts/{id}', () => {
  it('answers the alert with every evidence entry, by prefixed or bare id', async () => {
    const res = await get(`/v1/alerts/${alrt(ids.a1)}`);
    const alert = alertDetailSchema.parse(res.json());
    expect(alert.evidence).toEqual({ movements: ['m-1', 'm-2'], version: 2 });
    expect(alert.evidence_history).toEqual([
      { seq: 1, recorded_at: '2026-08-01T10:00:00.000Z', event_at: '2026-06-08T00:00:00.000Z', score: 0.5, severity: 'high', evidence: { movements: ['m-1'], version: 1 } },
      { seq: 2, recorded_at: '2026-08-01T10:00:00.000Z', event_at: '2026-06-08T00:00:00.000Z', score: 0.6, severity: 'high', evidence: { movements: ['m-1', 'm-2'], version: 2 } },
    ]);
    expect((await get(`/v1/alerts/${ids.a1}`)).json().alert_id).toBe(alrt(ids.a1));
  });

  it('answers a governed 404 for shadow, unknown and malformed ids', async () => {
    for (const id of [alrt(ids.shadow), alrt(uuidv7()), 'alrt_nope', 'nope', epsd(ids.a1).replace('epsd_', 'evt_')]) {
      expectProblem(await get(`/v1/alerts/${id}`), 404, 'svc:resource/not_found');
    }
  });
});

describe('GET /v1/episodes', () => {
  it('lists episodes newest first, with their members', async () => {
    const body = episodePageSchema.parse((await get('/v1/episodes?limit=3')).json());
    expect(body.data.map((e) => e.episode_id).slice(0, 2)).toEqual([epsd(ids.e1), epsd(ids.e2)]);
    expect(body.data[0]).toEqual({
      episode_id: epsd(ids.e1),
      status: 'open',
      severity: 'high',
      case_status: 'open',
      disposition: null,
      first_alert_at: '2026-06-01T00:00:00.000Z',
      last_alert_at: '2026-06-08T00:00:00.000Z',
      alert_count: 2,
      members: [
        { kind: 'account', external_id: 'alice-acct' },
        { kind: 'party', external_id: 'alice' },
      ],
      related: [{ kind: 'party', external_id: 'carol' }],
      created_at: '2026-06-09T00:00:00.000Z',
      updated_at: '2026-08-10T00:00:00.000Z',
    });
  });

  it('filters by status, member subject and kind, and change time', async () => {
    expect(await episodeIds('status=resolved')).toEqual([epsd(ids.e2)]);
    expect(await episodeIds('subject=alice')).toEqual([epsd(ids.e1)]);
    expect(await episodeIds('subject=carol&subject_kind=party')).toEqual([epsd(ids.e1)]);
    expect(await episodeIds('subject=alice-acct&subject_kind=party')).toEqual([]);
    expect(await episodeIds('subject=dave&status=open')).toEqual([]);
    expect(await episodeIds(`since=${encodeURIComponent('2026-08-05T00:00:00Z')}`)).toEqual([epsd(ids.e1), epsd(ids.e2)]);
  });

  it('returns every episode exactly once across pages', async () => {
    const pages = await allPages('/v1/episodes', 'subject=bulk-ep&limit=5', episodePageSchema);
    expect(pages).toHaveLength(BULK_EPISODES);
    expect(new Set(pages.map((e) => e.episode_id)).size).toBe(BULK_EPISODES);
    const cursor = (await get('/v1/episodes?subject=bulk-ep&limit=5')).json().next_cursor as string;
    // An episode changed during the walk, on a page already read or on one still to come, is
    // still seen once.
    const first = episodePageSchema.parse((await get('/v1/episodes?subject=bulk-ep&limit=5')).json());
    const changed = [first.data[4]!.episode_id.slice(5), pages.at(-1)!.episode_id.slice(5)];
    const { rows: kept } = await api.db.pool.query<{ episode_id: string; updated_at: Date }>(
      'SELECT episode_id, updated_at FROM episodes WHERE tenant_id = $1 AND episode_id = ANY($2::uuid[])',
      [api.tenantId, changed],
    );
    await api.db.pool.query(`UPDATE episodes SET updated_at = '2026-09-01T00:00:00Z' WHERE tenant_id = $1 AND episode_id = ANY($2::uuid[])`, [api.tenantId, changed]);
    const walked = [...first.data];
    for (let next = first.next_cursor; next; ) {
      const page = episodePageSchema.parse((await get(`/v1/episodes?subject=bulk-ep&limit=5&cursor=${encodeURIComponent(next)}`)).json());
      walked.push(...page.data);
      next = page.next_cursor;
    }
    expect(walked.map((e) => e.episode_id)).toEqual(pages.map((e) => e.episode_id));
    for (const row of kept) await api.db.pool.query('UPDATE episodes SET updated_at = $3 WHERE tenant_id = $1 AND episode_id = $2', [api.tenantId, row.episode_id, row.updated_at]);
    expectProblem(await get(`/v1/episodes?subject=bulk&limit=5&cursor=${encodeURIComponent(cursor)}`), 400, 'svc:request/invalid_parameter');
    expectProblem(await get(`/v1/alerts?subject=bulk-ep&limit=5&cursor=${encodeURIComponent(cursor)}`), 400, 'svc:request/invalid_parameter');
  });

  it.each([['status=closed', 'status'], ['subject_kind=account', 'subject_kind'], ['since=yesterday', 'since'], ['limit=1000', 'limit']])(
    'answers 400 for %s',
    async (query, path) => {
      expect(expectProblem(await get(`/v1/episodes?${query}`), 400, 'svc:request/invalid_parameter').errors[0]!.path).toBe(path);
    },
  );
});

describe('GET /v1/episodes/{id}', () => {
  it('answers the episode with its live alerts and its case history', async () => {
    const episode = episodeDetailSchema.parse((await get(`/v1/episodes/${epsd(ids.e2)}`)).json());
    expect(episode).toMatchObject({ episode_id: epsd(ids.e2), status: 'resolved', case_status: 'closed', disposition: 'false_positive', case_history: [] });
    expect(episode.alerts.map((a) => a.alert_id)).toEqual([alrt(ids.a3)]);
    expect(episode.alerts[0]).toEqual(alertPageSchema.parse((await get('/v1/alerts?status=closed')).json()).data[0]);
  });

  it('answers a governed 404 for unknown and malformed ids', async () => {
    for (const id of [epsd(uuidv7()), 'epsd_nope', alrt(ids.e1)]) expectProblem(await get(`/v1/episodes/${id}`), 404, 'svc:resource/not_found');
  });
});

describe('POST /v1/episodes/{id}/case', () => {
  const post = (id: string, body: unknown) => api.client.post(`/v1/episodes/${id}/case`, body, api.keys.compliance);

  it.each([
    [{}, ['status']],
    [{ status: 'closed' }, ['disposition']],
    [{ status: 'investigating', disposition: 'false_positive' }, ['status']],
    [{ status: 'done' }, ['status']],
    [{ disposition: 'guilty', note: 'x'.repeat(2001) }, ['disposition', 'note']],
    // Text PostgreSQL cannot store is the body's fault, with its path, not a bare bad_request.
    [{ status: 'investigating', note: 'a\u0000b' }, ['note']],
    [{ status: 'investigating', note: 'a\ud800b' }, ['note']],
    [{ status: 'open', assignee: 'bob' }, ['assignee']],
    [[{ status: 'open' }], ['']],
  ])('refuses %j with field paths', async (body, paths) => {
    const problem = expectProblem(await post(epsd(ids.e1), body), 400, 'svc:validation/schema');
    expect(problem.errors.map((e) => e.path).sort()).toEqual(paths.sort());
    expect(problem.errors.every((e) => e.code === 'svc:validation/schema')).toBe(true);
  });

  it('refuses bodies that are not JSON, unknown or malformed episodes, and an Idempotency-Key', async () => {
    expectProblem(await post(epsd(ids.e1), '{"status":'), 400, 'svc:request/malformed_json');
    // Honoured only by ingest: refused here, not silently ignored.
    const keyed = await api.client.send({ method: 'POST', url: `/v1/episodes/${epsd(ids.e1)}/case`, body: { status: 'investigating' }, key: api.keys.compliance, headers: { 'Idempotency-Key': 'k-1' } });
    expectProblem(keyed, 400, 'svc:request/bad_request');
    expectProblem(await post(epsd(ids.e1), ''), 400, 'svc:request/malformed_json');
    expectProblem(await post(epsd(uuidv7()), { status: 'investigating' }), 404, 'svc:resource/not_found');
    expectProblem(await post('epsd_nope', { status: 'investigating' }), 404, 'svc:resource/not_found');
    const { rows } = await api.db.pool.query('SELECT count(*)::int AS n FROM case_actions');
    expect(rows[0].n).toBe(0);
  });

  it('applies a case action and answers the episode; a repeat changes nothing', async () => {
    const episodeId = await insertEpisode(api.tenantId, { updatedAt: '2026-08-12T00:00:00Z', members: [['party', 'erin', 'subject']] });
    const alertId = await insertAlert(api.tenantId, { subject: ['party', 'erin'], createdAt: '2026-08-12T00:00:00Z', episodeId });
    api.clock.set('2026-09-01T12:30:00Z');
    const res = await post(episodeId, { status: 'investigating', note: 'called the customer' });
    expect(res.statusCode, res.body).toBe(200);
    const episode = episodeDetailSchema.parse(res.json());
    expect(episode).toMatchObject({ episode_id: epsd(episodeId), status: 'open', case_status: 'investigating', updated_at: '2026-09-01T12:30:00.000Z' });
    expect(episode.case_history).toEqual([
      { seq: 1, at: '2026-09-01T12:30:00.000Z', actor: api.keys.compliance.keyId, case_status: 'investigating', disposition: null, note: 'called the customer' },
    ]);

    api.clock.set('2026-09-01T13:00:00Z');
    const closed = episodeDetailSchema.parse((await post(epsd(episodeId), { disposition: 'suspicious_activity_reported' })).json());
    expect(closed).toMatchObject({ status: 'resolved', case_status: 'closed', disposition: 'suspicious_activity_reported' });
    expect(closed.alerts).toEqual([expect.objectContaining({ alert_id: alrt(alertId), status: 'closed', updated_at: '2026-09-01T13:00:00.000Z' })]);
    expect(closed.case_history.map((c) => c.seq)).toEqual([1, 2]);
    const { rows } = await api.db.pool.query(
      `SELECT type, classification, data FROM outgoing_events
        WHERE tenant_id = $1 AND data->>'episode_id' = $2 AND (type LIKE 'case.%' OR type LIKE 'episode.%') ORDER BY created_at, type`,
      [api.tenantId, epsd(episodeId)],
    );
    expect(rows.map((r) => r.type)).toEqual(['case.status_changed', 'case.disposed', 'case.status_changed', 'episode.resolved']);
    expect(rows.every((r) => r.classification === 'restricted_aml')).toBe(true);
    expect(rows.find((r) => r.type === 'case.disposed')!.data).toMatchObject({ case_status: 'closed', previous_case_status: 'investigating', disposition: 'suspicious_activity_reported' });

    api.clock.set('2026-09-01T13:30:00Z');
    const count = async () => (await api.db.pool.query('SELECT count(*)::int AS n FROM outgoing_events WHERE tenant_id = $1', [api.tenantId])).rows[0].n;
    const before = await count();
    const again = await post(epsd(episodeId), { status: 'closed', disposition: 'suspicious_activity_reported' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(closed);
    expect(await count()).toBe(before);
  });
});
