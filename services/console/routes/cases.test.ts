// The case inbox, assignment, the case page, notes, four-eyes reporting and the SLA, driven through
// the console app against a real PostgreSQL. Episodes and alerts are the detection pipeline's;
// here they are written directly and the inbox row refreshed as the pipeline does.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { uuidv7 } from '../../../platform/ids.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { applyCaseAction } from '../../cases/actions.ts';
import { refreshCaseInbox } from '../../cases/inbox.ts';
import { lockTenantDetection } from '../../detection/detection-lock.ts';
import { caseDetailSchema, casePageSchema, caseTimelineSchema, type CaseSummary } from '../../../schemas/console/cases.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../app.ts';
import { createConsoleUser, disableConsoleUser } from '../users.ts';
import { createConsole } from '../wiring.ts';
import { signIn, type ConsoleSession } from './console-session.test-kit.ts';

let db: TestDatabase;
let app: FastifyInstance;
const clock = new ManualClock('2026-09-10T12:00:00Z');
type Session = ConsoleSession;
let ana: Session; // analyst
let ben: Session; // analyst
let sue: Session; // supervisor
let sam: Session; // supervisor
let out: Session; // supervisor of another tenant
const cases: Record<string, string> = {};

type Res = Awaited<ReturnType<FastifyInstance['inject']>>;
const call = (s: Session | null, method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', url: string, body?: unknown, contentType = 'application/json') =>
  app.inject({
    method,
    url,
    headers: {
      ...(s ? { cookie: `${SESSION_COOKIE}=${s.cookie}`, [CSRF_HEADER]: s.csrf } : {}),
      ...(body !== undefined ? { 'content-type': contentType } : {}),
    },
    ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
function expectProblem(res: Res, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.json().code).toBe(code);
}
const epsd = (id: string) => `epsd_${id}`;

const session = (tenant: string, email: string, role: 'analyst' | 'supervisor'): Promise<Session> => signIn(app, db.pool, clock.now(), tenant, email, role);

interface Seed {
  severity: 'low' | 'medium' | 'high' | 'critical';
  openedAt: string;
  typology?: string;
  // Base-asset minor units of the alert's evidence total; none: no amount stated.
  amount?: bigint;
  asset?: string;
  subject?: [string, string];
  party?: string;
  caseStatus?: string;
  movements?: string[];
}
async function seedCase(tenant: string, seed: Seed): Promise<string> {
  const id = uuidv7(Date.parse(seed.openedAt));
  const closed = seed.caseStatus === 'closed';
  await db.pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, disposition, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5, 1, $6, $7, $5, $5)`,
    [tenant, id, closed ? 'resolved' : 'open', seed.severity, seed.openedAt, seed.caseStatus ?? 'open', closed ? 'false_positive' : null],
  );
  const [kind, subject] = seed.subject ?? ['party', `p-${id.slice(-6)}`];
  await db.pool.query(`INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at) VALUES ($1, $2, $3, $4, 'subject', $5)`, [tenant, id, kind, subject, seed.openedAt]);
  const alertId = uuidv7(Date.parse(seed.openedAt));
  await db.pool.query(
    `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id, window_from, window_to,
                         score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
     VALUES ($1, $2, 'live', 1, $3, 1, $3, $4, $5, $6, $7::timestamptz - interval '7 days', $7, 0.8, $8, 'open', 'summary', 'explanation', 1, $9, $7, $7)`,
    [tenant, alertId, seed.typology ?? 'structuring', kind, subject, seed.party ?? (kind === 'party' ? subject : null), seed.openedAt, seed.severity, id],
  );
  const evidence = {
    movements: seed.movements ?? [],
    counterparties: [],
    amounts: seed.amount === undefined ? undefined : { total: seed.amount.toString(), count: 1, asset: seed.asset ?? 'USD' },
    window: { from: seed.openedAt, to: seed.openedAt },
    thresholds: [],
  };
  await db.pool.query(`INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence) VALUES ($1, $2, 1, $3, $3, 0.8, $4, $5)`, [
    tenant,
    alertId,
    seed.openedAt,
    seed.severity,
    JSON.stringify(evidence),
  ]);
  await refreshCaseInbox(db.pool, tenant, [id]);
  return id;
}

const inbox = async (s: Session, query = ''): Promise<CaseSummary[]> => {
  const res = await call(s, 'GET', `/console/v1/cases${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return casePageSchema.parse(res.json()).data;
};
const idsOf = (rows: CaseSummary[]) => rows.map((r) => r.episode_id);

beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
  await createTenant(db.pool, 'other', 'EUR');
  ({ app } = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: db.pool, masterKey: randomBytes(32), clock, logger: false }));
  await app.ready();
  [ana, ben, sue, sam, out] = await Promise.all([
    session('acme', 'ana@example.com', 'analyst'),
    session('acme', 'ben@example.com', 'analyst'),
    session('acme', 'sue@example.com', 'supervisor'),
    session('acme', 'sam@example.com', 'supervisor'),
    session('other', 'out@example.com', 'supervisor'),
  ]);
  // Opened 1-9 September; by the clock (10 September, noon) the critical one of the 1st is overdue
  // (due 48 h after opening), the others not.
  cases.critical = await seedCase('acme', { severity: 'critical', openedAt: '2026-09-01T00:00:00Z', typology: 'fan_in', amount: 1_548_800n, movements: ['mv-1', 'mv-2'], subject: ['account', 'acct-1'], party: 'alice' });
  cases.high = await seedCase('acme', { severity: 'high', openedAt: '2026-09-05T00:00:00Z', typology: 'structuring', amount: 99_000_000n });
  cases.medium = await seedCase('acme', { severity: 'medium', openedAt: '2026-09-07T00:00:00Z', typology: 'structuring' });
  cases.low = await seedCase('acme', { severity: 'low', openedAt: '2026-09-09T00:00:00Z', typology: 'round_amounts', amount: 5_000n });
  // An amount in another asset than the base one is not the case's amount at stake.
  cases.foreign = await seedCase('acme', { severity: 'low', openedAt: '2026-09-09T06:00:00Z', typology: 'velocity_spike', amount: 7n, asset: 'EUR' });
  cases.closed = await seedCase('acme', { severity: 'high', openedAt: '2026-08-01T00:00:00Z', caseStatus: 'closed', amount: 1n });
  cases.other = await seedCase('other', { severity: 'critical', openedAt: '2026-09-02T00:00:00Z', amount: 1n, asset: 'EUR' });
  await db.pool.query(
    `INSERT INTO canonical_movements (tenant_id, external_id, event_id, occurred_at, received_at, type, status, amount_value, amount_asset, amount_scale, debit_account_id, credit_account_id, data)
     VALUES ('acme', 'mv-1', gen_random_uuid(), '2026-08-31T10:00:00Z', now(), 'transfer', 'completed', 1500000, 'USD', 2, 'acct-2', 'acct-1', '{}'),
            ('acme', 'mv-2', gen_random_uuid(), '2026-08-31T11:00:00Z', now(), 'transfer', 'completed', 48800, 'USD', 2, 'acct-3', 'acct-1', '{}')`,
  );
}, 120_000);
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

describe('the case inbox', () => {
  it('lists the open cases oldest first with priority, age, due date, amount, typologies and subjects; never another tenant\'s', async () => {
    const rows = await inbox(ana);
    expect(idsOf(rows)).toEqual([cases.critical, cases.high, cases.medium, cases.low, cases.foreign].map((id) => epsd(id!)));
    const critical = rows[0]!;
    expect(critical).toMatchObject({
      case_status: 'open',
      priority: 'critical',
      assignee: null,
      opened_at: '2026-09-01T00:00:00.000Z',
      age_seconds: 9 * 86_400 + 12 * 3600,
      due_at: '2026-09-03T00:00:00.000Z',
      overdue: true,
      amount: { value: '1548800', asset: 'USD', scale: 2 },
      typologies: ['fan_in'],
      subjects: [{ kind: 'account', external_id: 'acct-1' }],
      subject_count: 1,
      awaiting_approval: false,
    });
    expect(rows[1]).toMatchObject({ priority: 'high', due_at: '2026-09-12T00:00:00.000Z', overdue: false });
    expect(rows.find((r) => r.episode_id === epsd(cases.medium!))!.amount).toBeNull();
    expect(rows.find((r) => r.episode_id === epsd(cases.foreign!))!.amount).toBeNull();
    expect(idsOf(await inbox(out))).toEqual([epsd(cases.other!)]);
    expectProblem(await call(out, 'GET', `/console/v1/cases/${epsd(cases.critical!)}`), 404, 'svc:resource/not_found');
  });

  it('filters by status, typology, priority, overdue and assignee (me, unassigned, a user)', async () => {
    expect(idsOf(await inbox(ana, '?status=closed'))).toEqual([epsd(cases.closed!)]);
    expect(idsOf(await inbox(ana, '?typology=structuring'))).toEqual([epsd(cases.high!), epsd(cases.medium!)]);
    expect(idsOf(await inbox(ana, '?priority=low'))).toEqual([epsd(cases.low!), epsd(cases.foreign!)]);
    expect(idsOf(await inbox(ana, '?overdue=true'))).toEqual([epsd(cases.critical!)]);
    expect(await inbox(ana, '?overdue=false')).toHaveLength(4);
    const take = await call(ana, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(cases.low!)], user_id: ana.userId });
    expect(take.json().results).toEqual([{ episode_id: epsd(cases.low!), outcome: 'assigned', assignee: { user_id: ana.userId, email: 'ana@example.com' } }]);
    expect(idsOf(await inbox(ana, '?assignee=me'))).toEqual([epsd(cases.low!)]);
    expect(idsOf(await inbox(sue, `?assignee=${ana.userId}`))).toEqual([epsd(cases.low!)]);
    expect(await inbox(sue, '?assignee=me')).toEqual([]);
    expect(idsOf(await inbox(ana, '?assignee=unassigned'))).not.toContain(epsd(cases.low!));
    expect((await inbox(ana, '?assignee=unassigned')).length).toBe(4);
    // Give it back for the other tests.
    expect((await call(ana, 'POST', '/console/v1/cases/assign', { episode_ids: [cases.low], user_id: null })).json().results[0].outcome).toBe('assigned');
  });

  it('sorts by due date, amount (largest first, none last) and priority, in pages bound to their filters', async () => {
    expect(idsOf(await inbox(ana, '?sort=due'))).toEqual([cases.critical, cases.high, cases.medium, cases.low, cases.foreign].map((id) => epsd(id!)));
    const byAmount: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await call(ana, 'GET', `/console/v1/cases?sort=amount&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const body = casePageSchema.parse(res.json());
      expect(body.data.length).toBeLessThanOrEqual(2);
      byAmount.push(...idsOf(body.data));
      cursor = body.next_cursor;
      if (cursor) expectProblem(await call(ana, 'GET', `/console/v1/cases?sort=due&limit=2&cursor=${encodeURIComponent(cursor)}`), 400, 'svc:request/invalid_parameter');
    } while (cursor);
    expect(byAmount.slice(0, 3)).toEqual([cases.high, cases.critical, cases.low].map((id) => epsd(id!)));
    expect(new Set(byAmount.slice(3))).toEqual(new Set([epsd(cases.medium!), epsd(cases.foreign!)]));
    const byPriority: string[] = [];
    cursor = undefined;
    do {
      const body = casePageSchema.parse((await call(ana, 'GET', `/console/v1/cases?sort=priority&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json());
      byPriority.push(...idsOf(body.data));
      cursor = body.next_cursor;
    } while (cursor);
    expect(byPriority).toEqual([cases.critical, cases.high, cases.medium, cases.low, cases.foreign].map((id) => epsd(id!)));
  });

  it('answers a bad query with every parameter at fault, and no session with 401 first', async () => {
    const res = await call(ana, 'GET', '/console/v1/cases?sort=size&priority=urgent&limit=0&assignee=someone&colour=red');
    expectProblem(res, 400, 'svc:request/invalid_parameter');
    expect(res.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['assignee', 'colour', 'limit', 'priority', 'sort']);
    expect(res.json().errors.every((e: { code: string }) => e.code === 'svc:request/invalid_parameter')).toBe(true);
    expectProblem(await call(null, 'GET', '/console/v1/cases?sort=size'), 401, 'svc:console/unauthenticated');
    expectProblem(await call(ana, 'GET', '/console/v1/cases?status=open&status=closed'), 400, 'svc:request/invalid_parameter');
  });
});

describe('the SLA', () => {
  it('is the defaults until a supervisor sets the tenant\'s; due dates follow, and the change is audited', async () => {
    const before = (await call(ana, 'GET', '/console/v1/settings/case-sla')).json();
    expect(before).toEqual({ hours: { critical: 48, high: 168, medium: 336, low: 720 }, customised: false, updated_at: null, updated_by: null });
    const hours = { critical: 24, high: 48, medium: 96, low: 240 };
    expectProblem(await call(ana, 'PUT', '/console/v1/settings/case-sla', { hours }), 403, 'svc:auth/insufficient_scope');
    expectProblem(await call(sue, 'PUT', '/console/v1/settings/case-sla', { hours: { ...hours, low: 0 } }), 400, 'svc:validation/schema');
    const set = await call(sue, 'PUT', '/console/v1/settings/case-sla', { hours });
    expect(set.json()).toMatchObject({ hours, customised: true, updated_by: 'sue@example.com' });
    const rows = await inbox(ana);
    expect(rows.find((r) => r.episode_id === epsd(cases.high!))).toMatchObject({ due_at: '2026-09-07T00:00:00.000Z', overdue: true });
    expect((await call(out, 'GET', '/console/v1/settings/case-sla')).json().customised).toBe(false);
    const audit = await db.pool.query(`SELECT details FROM console_audit WHERE tenant_id = 'acme' AND action = 'case_sla.changed'`);
    expect(audit.rows).toEqual([{ details: { from: { critical: 48, high: 168, medium: 336, low: 720 }, to: hours } }]);
    await call(sue, 'PUT', '/console/v1/settings/case-sla', { hours: { critical: 48, high: 168, medium: 336, low: 720 } });
  });
});

describe('amount at stake', () => {
  it('states none for a case whose alerts moved nothing, as a sanctions hit no movement followed', async () => {
    await createTenant(db.pool, 'nil', 'USD');
    const id = await seedCase('nil', { severity: 'critical', openedAt: '2026-09-09T00:00:00Z', typology: 'sanctions_hit_reported', amount: 0n });
    const { rows } = await db.pool.query('SELECT amount_value, amount_asset FROM case_inbox WHERE tenant_id = $1 AND episode_id = $2', ['nil', id]);
    expect(rows).toEqual([{ amount_value: null, amount_asset: null }]);
  });
});

describe('assignment', () => {
  it('lets a supervisor assign and reassign many at once, each audited; an analyst takes only unassigned ones', async () => {
    const many = await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(cases.high!), epsd(cases.medium!), epsd(cases.other!)], user_id: ben.userId });
    const results = many.json().results as Array<{ episode_id: string; outcome: string }>;
    expect(Object.fromEntries(results.map((r) => [r.episode_id, r.outcome]))).toEqual({ [epsd(cases.high!)]: 'assigned', [epsd(cases.medium!)]: 'assigned', [epsd(cases.other!)]: 'not_found' });
    expect(idsOf(await inbox(ben, '?assignee=me'))).toEqual([epsd(cases.high!), epsd(cases.medium!)]);
    // Ana may not take Ben's case, nor give a case to Ben; she may take an unassigned one.
    const taking = await call(ana, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(cases.high!), epsd(cases.critical!)], user_id: ana.userId });
    expect(taking.json().results.map((r: { outcome: string }) => r.outcome)).toEqual(
      [cases.high!, cases.critical!].sort().map((id) => (id === cases.high ? 'forbidden' : 'assigned')),
    );
    expect((await call(ana, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(cases.low!)], user_id: ben.userId })).json().results[0].outcome).toBe('forbidden');
    const reassign = await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(cases.high!)], user_id: ana.userId });
    expect(reassign.json().results[0]).toMatchObject({ outcome: 'assigned', assignee: { email: 'ana@example.com' } });
    expect((await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(cases.high!)], user_id: ana.userId })).json().results[0].outcome).toBe('unchanged');
    expectProblem(await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(cases.high!)], user_id: out.userId }), 400, 'svc:validation/schema');
    expectProblem(await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [], user_id: null }), 400, 'svc:validation/schema');
    const audit = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM console_audit WHERE tenant_id = 'acme' AND action = 'case.assigned' AND subject = $1`, [epsd(cases.high!)]);
    expect(audit.rows[0]!.n).toBe(2);
  });

  it('waits for a detection commit of the tenant before locking any case row, as detection locks them', async () => {
    const bulk = () => call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(cases.low!), epsd(cases.medium!)], user_id: sam.userId });
    const one = () => call(sue, 'POST', `/console/v1/episodes/${epsd(cases.low!)}/assign`, { user_id: null });
    for (const [assign, outcome] of [
      [bulk, (res: Res) => res.json().results.map((r: { outcome: string }) => r.outcome)],
      [one, (res: Res) => res.statusCode],
    ] as const) {
      const detection = await db.pool.connect();
      try {
        await detection.query('BEGIN');
        await lockTenantDetection(detection, 'acme');
        let answered = false;
        const assigning = assign().finally(() => {
          answered = true;
        });
        let waiting = false;
        while (!waiting && !answered) {
          const { rows } = await db.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
          );
          waiting = rows[0]!.n > 0;
        }
        expect({ waiting, answered }).toEqual({ waiting: true, answered: false });
        // Meanwhile detection can still take the rows it changes.
        const rows = await detection.query('SELECT 1 FROM episodes WHERE tenant_id = $1 AND episode_id = ANY($2::uuid[]) FOR UPDATE NOWAIT', ['acme', [cases.low, cases.medium]]);
        expect(rows.rowCount).toBe(2);
        await detection.query('COMMIT');
        expect(outcome(await assigning)).toEqual(assign === bulk ? ['assigned', 'assigned'] : 200);
      } finally {
        detection.release();
      }
    }
    await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(cases.low!), epsd(cases.medium!)], user_id: null });
  });

  it('gives a disabled user\'s open cases back to the unassigned queue, each audited; a closed one keeps its holder, whom nobody then waits for', async () => {
    const vic = await session('acme', 'vic@example.com', 'analyst');
    const open = await seedCase('acme', { severity: 'high', openedAt: '2026-09-09T01:00:00Z' });
    const closed = await seedCase('acme', { severity: 'low', openedAt: '2026-09-09T02:00:00Z', caseStatus: 'closed' });
    const given = await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(open), epsd(closed)], user_id: vic.userId });
    expect(given.json().results.map((r: { outcome: string }) => r.outcome)).toEqual(['assigned', 'assigned']);
    expect(await disableConsoleUser(db.pool, 'acme', 'vic@example.com', clock.now())).toEqual({ casesReleased: 1 });
    expect(idsOf(await inbox(ana, '?assignee=unassigned'))).toContain(epsd(open));
    const held = await db.pool.query<{ episode_id: string }>('SELECT episode_id FROM console_assignments WHERE tenant_id = $1 AND user_id = $2', ['acme', vic.userId]);
    expect(held.rows.map((r) => r.episode_id)).toEqual([closed]);
    const audit = await db.pool.query<{ details: unknown }>(`SELECT details FROM console_audit WHERE tenant_id = 'acme' AND action = 'case.assigned' AND subject = $1 ORDER BY at, audit_id`, [epsd(open)]);
    expect(audit.rows.at(-1)!.details).toEqual({ from: vic.userId, to: null, to_email: null, reason: 'user_disabled' });
    // An analyst takes either: a disabled holder is nobody.
    const taken = await call(ana, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(open), epsd(closed)], user_id: ana.userId });
    expect(taken.json().results.map((r: { outcome: string }) => r.outcome)).toEqual(['assigned', 'assigned']);
    await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(open), epsd(closed)], user_id: null });
  });

  it('lists a reopened case its disabled holder kept as unassigned, in the inbox and on its page, where it can be taken', async () => {
    const wes = await session('acme', 'wes@example.com', 'analyst');
    const id = await seedCase('acme', { severity: 'medium', openedAt: '2026-09-09T03:00:00Z', caseStatus: 'closed' });
    expect((await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(id)], user_id: wes.userId })).statusCode).toBe(200);
    expect(await disableConsoleUser(db.pool, 'acme', 'wes@example.com', clock.now())).toEqual({ casesReleased: 0 });
    // Closed, the case keeps who worked it.
    expect((await inbox(ana, '?status=closed')).find((r) => r.episode_id === epsd(id))?.assignee).toEqual({ user_id: wes.userId, email: 'wes@example.com' });
    expect(await applyCaseAction(db.pool, { tenantId: 'acme', episodeId: epsd(id), status: 'open', actor: 'api' }, clock.now())).toMatchObject({ kind: 'applied' });
    // Reopened, a disabled holder is nobody: listed as unassigned, offered to take, not under their name.
    const row = (await inbox(ana, '?assignee=unassigned')).find((r) => r.episode_id === epsd(id));
    expect(row?.assignee).toBeNull();
    expect(idsOf(await inbox(sue, `?assignee=${wes.userId}`))).not.toContain(epsd(id));
    const page = caseDetailSchema.parse((await call(ana, 'GET', `/console/v1/cases/${epsd(id)}`)).json());
    expect(page.assignee).toBeNull();
    const taken = await call(ana, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(id)], user_id: ana.userId });
    expect(taken.json().results).toEqual([{ episode_id: epsd(id), outcome: 'assigned', assignee: { user_id: ana.userId, email: 'ana@example.com' } }]);
    expect((await inbox(ana, '?assignee=me')).find((r) => r.episode_id === epsd(id))?.assignee).toEqual({ user_id: ana.userId, email: 'ana@example.com' });
    await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(id)], user_id: null });
  });

  it('names no disabled holder of a reopened case on its episode page or in its case file, as the inbox does', async () => {
    const wyn = await session('acme', 'wyn@example.com', 'analyst');
    const id = await seedCase('acme', { severity: 'low', openedAt: '2026-09-09T04:00:00Z', caseStatus: 'closed' });
    expect((await call(sue, 'POST', '/console/v1/cases/assign', { episode_ids: [epsd(id)], user_id: wyn.userId })).statusCode).toBe(200);
    await disableConsoleUser(db.pool, 'acme', 'wyn@example.com', clock.now());
    const episodePage = async () => {
      const res = await call(ana, 'GET', `/console/v1/episodes/${epsd(id)}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().assignee;
    };
    const fileAssignee = async () => {
      const res = await call(ana, 'GET', `/console/v1/cases/${epsd(id)}/file.html`);
      expect(res.statusCode, res.body).toBe(200);
      return /<tr><th>Assignee<\/th><td>([^<]*)<\/td><\/tr>/.exec(res.body)?.[1];
    };
    // Closed, the case shows who worked it, everywhere.
    expect(await episodePage()).toEqual({ user_id: wyn.userId, email: 'wyn@example.com' });
    expect(await fileAssignee()).toBe('wyn@example.com');
    expect(await applyCaseAction(db.pool, { tenantId: 'acme', episodeId: epsd(id), status: 'open', actor: 'api' }, clock.now())).toMatchObject({ kind: 'applied' });
    // Reopened, nobody holds it: not the disabled user, whom no one can reach.
    expect((await inbox(ana, '?assignee=unassigned')).find((r) => r.episode_id === epsd(id))?.assignee).toBeNull();
    expect(await episodePage()).toBeNull();
    expect(await fileAssignee()).toBe('unassigned');
  });

  it('offers every active user of the tenant as an assignee, a disabled one and other tenants\' never', async () => {
    const idle = await createConsoleUser(db.pool, { tenantId: 'acme', email: 'ida@example.com', role: 'analyst' }, clock.now());
    const gone = await createConsoleUser(db.pool, { tenantId: 'acme', email: 'gus@example.com', role: 'analyst' }, clock.now());
    if (idle.kind !== 'created' || gone.kind !== 'created') throw new Error('users not created');
    await disableConsoleUser(db.pool, 'acme', 'gus@example.com', clock.now());
    const res = await call(sue, 'GET', '/console/v1/cases/assignees');
    expect(res.statusCode, res.body).toBe(200);
    const listed = (res.json().data as Array<{ user_id: string; email: string; role: string }>).map((u) => `${u.email} ${u.role}`);
    expect(listed).toEqual(['ana@example.com analyst', 'ben@example.com analyst', 'ida@example.com analyst', 'sam@example.com supervisor', 'sue@example.com supervisor']);
    expectProblem(await call(null, 'GET', '/console/v1/cases/assignees'), 401, 'svc:console/unauthenticated');
  });
});

describe('the case page', () => {
  it('shows the case with its alerts, the parties behind account subjects and the movements the alerts cite', async () => {
    const res = await call(ana, 'GET', `/console/v1/cases/${epsd(cases.critical!)}`);
    expect(res.statusCode, res.body).toBe(200);
    const detail = caseDetailSchema.parse(res.json());
    expect(detail.parties).toEqual([{ external_id: 'alice', via_accounts: ['acct-1'] }]);
    expect(detail.movement_ids).toEqual(['mv-1', 'mv-2']);
    expect(detail.alerts).toHaveLength(1);
    expect(detail.report).toBeNull();
    const episode = await call(ana, 'GET', `/console/v1/episodes/${epsd(cases.critical!)}`);
    expect(episode.json().parties).toEqual([{ external_id: 'alice', via_accounts: ['acct-1'] }]);
    expectProblem(await call(ana, 'GET', '/console/v1/cases/epsd_nope'), 404, 'svc:resource/not_found');
    // Nothing of another tenant's case is reachable.
    for (const path of ['', '/timeline', '/notes', '/report']) expectProblem(await call(out, 'GET', `/console/v1/cases/${epsd(cases.critical!)}${path}`), 404, 'svc:resource/not_found');
    expectProblem(await call(out, 'POST', `/console/v1/cases/${epsd(cases.critical!)}/report`, { narrative: 'x' }), 404, 'svc:resource/not_found');
    expectProblem(await call(out, 'POST', `/console/v1/cases/${epsd(cases.critical!)}/report/decision`, { decision: 'reject', reason: 'x' }), 404, 'svc:resource/not_found');
  });

  it('keeps notes append-only, with author and time, each audited', async () => {
    const url = `/console/v1/cases/${epsd(cases.critical!)}/notes`;
    const first = await call(ana, 'POST', url, { body: 'Called the branch: the sender is a known customer.' });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ author: { user_id: ana.userId, email: 'ana@example.com' }, created_at: clock.now().toISOString() });
    clock.advance(60);
    await call(sue, 'POST', url, { body: 'Ask for the source of funds.' });
    const notes = (await call(ben, 'GET', url)).json();
    expect(notes.data.map((n: { body: string }) => n.body)).toEqual(['Called the branch: the sender is a known customer.', 'Ask for the source of funds.']);
    expect((await call(ben, 'GET', `${url}?limit=1`)).json()).toMatchObject({ has_more: true, data: [{ author: { email: 'ana@example.com' } }] });
    expectProblem(await call(ana, 'POST', url, { body: 'x', pinned: true }), 400, 'svc:validation/schema');
    expect((await call(ana, 'POST', url, { body: 'x', pinned: true })).json().errors).toEqual([{ path: 'pinned', code: 'svc:validation/schema', message: 'unknown member' }]);
    expectProblem(await call(ana, 'POST', url, { body: '   ' }), 400, 'svc:validation/schema');
    // Text PostgreSQL cannot store is the field's fault, said with its path.
    for (const body of ['a\u0000b', 'a\ud800']) expect((await call(ana, 'POST', url, { body })).json()).toMatchObject({ code: 'svc:validation/schema', errors: [{ path: 'body' }] });
    expect((await call(ana, 'POST', `/console/v1/cases/${epsd(cases.critical!)}/report`, { narrative: 'a\u0000b' })).json()).toMatchObject({ code: 'svc:validation/schema', errors: [{ path: 'narrative' }] });
    expectProblem(await call(ana, 'POST', url, 'not json'), 400, 'svc:request/malformed_json');
    expectProblem(await call(ana, 'POST', url, 'body=x', 'application/x-www-form-urlencoded'), 415, 'svc:request/unsupported_media_type');
    expectProblem(await call(out, 'POST', url, { body: 'hello' }), 404, 'svc:resource/not_found');
    const noteId = first.json().note_id as string;
    expect((await call(ana, 'DELETE', `${url}/${noteId}`)).statusCode).toBe(404);
    await expect(db.pool.query(`UPDATE case_notes SET body = 'changed' WHERE note_id = $1`, [noteId])).rejects.toMatchObject({ code: '42501' });
    await expect(db.pool.query(`DELETE FROM case_notes WHERE note_id = $1`, [noteId])).rejects.toMatchObject({ code: '42501' });
    const audit = await db.pool.query(`SELECT details ->> 'note_id' AS note FROM console_audit WHERE action = 'case.note_added' ORDER BY audit_id`);
    expect(audit.rows[0]).toEqual({ note: noteId });
    expect(audit.rows).toHaveLength(2);
  });

  it('orders alerts, cited movements, actions, audit entries and notes in one timeline', async () => {
    const res = await call(ana, 'GET', `/console/v1/cases/${epsd(cases.critical!)}/timeline`);
    expect(res.statusCode, res.body).toBe(200);
    const timeline = caseTimelineSchema.parse(res.json());
    expect(timeline.movement_ids).toEqual(['mv-1', 'mv-2']);
    const kinds = timeline.entries.map((e) => e.kind);
    expect(kinds.slice(0, 3)).toEqual(['movement', 'movement', 'alert']);
    expect(kinds).toContain('note');
    expect(kinds).toContain('audit');
    const movement = timeline.entries[0]!;
    expect(movement).toMatchObject({ kind: 'movement', movement_id: 'mv-1', amount: { value: '1500000', asset: 'USD', scale: 2 }, debit_account: 'acct-2' });
    expect(timeline.entries.map((e) => Date.parse(e.at))).toEqual(timeline.entries.map((e) => Date.parse(e.at)).sort((a, b) => a - b));
    expect(timeline.truncated).toBe(false);
  });

  it('audits a view of the timeline, the notes or the report proposals as a view of the case', async () => {
    const ref = epsd(cases.foreign!);
    for (const part of ['timeline', 'notes', 'report']) expect((await call(ben, 'GET', `/console/v1/cases/${ref}/${part}`)).statusCode).toBe(200);
    const { rows } = await db.pool.query(`SELECT actor_user_id, details->>'via' AS via FROM console_audit WHERE subject = $1 AND action = 'episode.viewed' ORDER BY audit_id`, [ref]);
    expect(rows).toEqual(['timeline', 'notes', 'report'].map((via) => ({ actor_user_id: ben.userId, via })));
  });
});

describe('acting on a case as it was shown', () => {
  it('refuses a change to a case another analyst changed since the page was loaded, and applies one to a case as shown', async () => {
    const id = await seedCase('acme', { severity: 'low', openedAt: '2026-09-06T00:00:00Z' });
    const episode = `/console/v1/episodes/${epsd(id)}`;
    const shown = { case_status: 'open', disposition: null };
    // Ben and Ana both see the case open. Ben closes it first.
    const closed = await call(ben, 'POST', `${episode}/disposition`, { disposition: 'false_positive', reason: 'known payroll', expected: shown });
    expect(closed.statusCode, closed.body).toBe(200);
    // Ana, from her stale page, neither reopens it nor replaces Ben's disposition.
    const reopen = await call(ana, 'POST', `${episode}/status`, { status: 'investigating', reason: 'looking', expected: shown });
    expectProblem(reopen, 409, 'svc:sequence/conflict');
    expect(reopen.json().detail).toMatch(/now closed \(false positive\)/);
    expectProblem(await call(ana, 'POST', `${episode}/disposition`, { disposition: 'no_further_action', reason: 'nothing', expected: shown }), 409, 'svc:sequence/conflict');
    expect((await db.pool.query(`SELECT case_status, disposition FROM episodes WHERE episode_id = $1`, [id])).rows[0]).toEqual({ case_status: 'closed', disposition: 'false_positive' });
    // Having looked again, she may.
    const seen = { case_status: 'closed', disposition: 'false_positive' };
    expect((await call(ana, 'POST', `${episode}/status`, { status: 'investigating', reason: 'new facts', expected: seen })).statusCode).toBe(200);
  });
});

describe('four-eyes reporting', () => {
  it('refuses filing a report directly from the console', async () => {
    const res = await call(sue, 'POST', `/console/v1/episodes/${epsd(cases.critical!)}/disposition`, { disposition: 'suspicious_activity_reported', reason: 'reported' });
    expectProblem(res, 400, 'svc:validation/schema');
    expect(res.json().errors[0].path).toBe('disposition');
  });

  it('applies a proposed report only when a second supervisor approves; the proposer cannot', async () => {
    const url = `/console/v1/cases/${epsd(cases.critical!)}/report`;
    const proposed = await call(sue, 'POST', url, { narrative: 'Twelve new senders in three days, money moved on at once.' });
    expect(proposed.statusCode, proposed.body).toBe(201);
    expect(proposed.json()).toMatchObject({ state: 'pending', proposed_by: { email: 'sue@example.com' }, decided_by: null });
    expect(idsOf(await inbox(sam, '?awaiting_approval=true'))).toEqual([epsd(cases.critical!)]);
    expectProblem(await call(ana, 'POST', url, { narrative: 'again' }), 409, 'svc:sequence/conflict');
    // The proposer, even a supervisor, and an analyst cannot approve.
    expectProblem(await call(sue, 'POST', `${url}/decision`, { decision: 'approve', reason: 'mine' }), 403, 'svc:auth/insufficient_scope');
    expectProblem(await call(ana, 'POST', `${url}/decision`, { decision: 'approve', reason: 'ok' }), 403, 'svc:auth/insufficient_scope');
    expect((await db.pool.query(`SELECT case_status, disposition FROM episodes WHERE episode_id = $1`, [cases.critical])).rows[0]).toEqual({ case_status: 'open', disposition: null });
    const approved = await call(sam, 'POST', `${url}/decision`, { decision: 'approve', reason: 'Narrative checked against the evidence.' });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ state: 'approved', decided_by: { email: 'sam@example.com' }, decision_reason: 'Narrative checked against the evidence.' });
    expect((await db.pool.query(`SELECT case_status, disposition FROM episodes WHERE episode_id = $1`, [cases.critical])).rows[0]).toEqual({
      case_status: 'closed',
      disposition: 'suspicious_activity_reported',
    });
    const actions = await db.pool.query(`SELECT actor, disposition FROM case_actions WHERE episode_id = $1`, [cases.critical]);
    expect(actions.rows).toEqual([{ actor: `console:${sam.userId}`, disposition: 'suspicious_activity_reported' }]);
    const audit = await db.pool.query(`SELECT action, actor_user_id FROM console_audit WHERE subject = $1 AND action LIKE 'case.report_%' ORDER BY audit_id`, [epsd(cases.critical!)]);
    expect(audit.rows).toEqual([
      { action: 'case.report_proposed', actor_user_id: sue.userId },
      { action: 'case.report_approved', actor_user_id: sam.userId },
    ]);
    expect(idsOf(await inbox(sam))).not.toContain(epsd(cases.critical!));
    expect(idsOf(await inbox(sam, '?status=closed'))).toContain(epsd(cases.critical!));
    expectProblem(await call(sam, 'POST', `${url}/decision`, { decision: 'approve', reason: 'again' }), 409, 'svc:sequence/conflict');
    expectProblem(await call(ana, 'POST', url, { narrative: 'once more' }), 409, 'svc:sequence/conflict');
    // One person cannot take the filed report away: neither by another disposition nor by reopening.
    const episode = `/console/v1/episodes/${epsd(cases.critical!)}`;
    expectProblem(await call(sue, 'POST', `${episode}/disposition`, { disposition: 'false_positive', reason: 'changed my mind' }), 409, 'svc:sequence/conflict');
    expectProblem(await call(ana, 'POST', `${episode}/status`, { status: 'open', reason: 'reopen' }), 409, 'svc:sequence/conflict');
    expect((await db.pool.query(`SELECT case_status, disposition FROM episodes WHERE episode_id = $1`, [cases.critical])).rows[0]).toEqual({
      case_status: 'closed',
      disposition: 'suspicious_activity_reported',
    });
  });

  it('sends a rejected proposal back to the proposer', async () => {
    const url = `/console/v1/cases/${epsd(cases.low!)}/report`;
    expect((await call(ben, 'POST', url, { narrative: 'Round amounts every day.' })).statusCode).toBe(201);
    // While the proposal waits, nobody closes the case otherwise alone; other status changes go on.
    const episode = `/console/v1/episodes/${epsd(cases.low!)}`;
    expectProblem(await call(ana, 'POST', `${episode}/disposition`, { disposition: 'no_further_action', reason: 'nothing here' }), 409, 'svc:sequence/conflict');
    expect((await call(ana, 'POST', `${episode}/status`, { status: 'investigating', reason: 'looking' })).statusCode).toBe(200);
    const rejected = await call(sue, 'POST', `${url}/decision`, { decision: 'reject', reason: 'Name the movements in the narrative.' });
    expect(rejected.json()).toMatchObject({ state: 'rejected', decided_by: { email: 'sue@example.com' } });
    const row = (await inbox(ben, '?assignee=me')).find((r) => r.episode_id === epsd(cases.low!));
    expect(row).toMatchObject({ case_status: 'investigating', awaiting_approval: false, assignee: { email: 'ben@example.com' } });
    const list = (await call(ben, 'GET', url)).json();
    expect(list.data.map((p: { state: string }) => p.state)).toEqual(['rejected']);
    const audit = await db.pool.query(`SELECT action FROM console_audit WHERE subject = $1 AND action IN ('case.report_proposed', 'case.report_rejected', 'case.assigned') ORDER BY audit_id`, [
      epsd(cases.low!),
    ]);
    expect(audit.rows.map((r) => r.action).slice(-3)).toEqual(['case.report_proposed', 'case.assigned', 'case.report_rejected']);
  });

  it('keeps a proposal in the awaiting-approval list when the case was closed through /v1 meanwhile', async () => {
    const id = await seedCase('acme', { severity: 'medium', openedAt: '2026-09-08T00:00:00Z' });
    expect((await call(ben, 'POST', `/console/v1/cases/${epsd(id)}/report`, { narrative: 'Cash in, wired out the same day.' })).statusCode).toBe(201);
    const closed = await applyCaseAction(db.pool, { tenantId: 'acme', episodeId: epsd(id), disposition: 'no_further_action', actor: 'api' }, clock.now());
    expect(closed.kind).toBe('applied');
    expect(idsOf(await inbox(sam))).not.toContain(epsd(id));
    expect(idsOf(await inbox(sam, '?awaiting_approval=true'))).toContain(epsd(id));
    expect(idsOf(await inbox(sam, '?awaiting_approval=true&sort=due'))).toContain(epsd(id));
  });

  it('leaves a rejected proposal\'s case where it was when its proposer has been disabled', async () => {
    const dee = await session('acme', 'dee@example.com', 'analyst');
    const url = `/console/v1/cases/${epsd(cases.medium!)}/report`;
    expect((await call(dee, 'POST', url, { narrative: 'Structured deposits.' })).statusCode).toBe(201);
    const before = (await inbox(sue)).find((r) => r.episode_id === epsd(cases.medium!))!.assignee;
    await disableConsoleUser(db.pool, 'acme', 'dee@example.com', clock.now());
    expect((await call(sue, 'POST', `${url}/decision`, { decision: 'reject', reason: 'Not enough.' })).statusCode).toBe(200);
    expect((await inbox(sue)).find((r) => r.episode_id === epsd(cases.medium!))!.assignee).toEqual(before);
    const assigned = await db.pool.query(`SELECT 1 FROM console_audit WHERE subject = $1 AND action = 'case.assigned' AND details->>'to_email' = 'dee@example.com'`, [epsd(cases.medium!)]);
    expect(assigned.rowCount).toBe(0);
  });
});
