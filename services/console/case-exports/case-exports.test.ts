import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { loadConfig } from '../../../platform/config.ts';
import { loadRateFile } from '../../../platform/fx/rate-files.ts';
import { uuidv7 } from '../../../platform/ids.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { startDetectionWorld, type DetectionWorld } from '../../../test/support/detection-world.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../app.ts';
import { addCaseNote } from '../queries/case-notes.ts';
import { decideProposal, insertProposal } from '../queries/case-reports.ts';
import { createConsole } from '../wiring.ts';
import { signIn } from '../routes/console-session.test-kit.ts';
import { putReportingEntity, reportingEntitySchema } from './reporting-entity.ts';
import { loadCaseFile } from './case-file.ts';
import { registryWith } from '../../../schemas/assets/registry.ts';

// The published goAML schema (test/fixtures/goaml/README.md).
const XSD = readFileSync(new URL('../../../test/fixtures/goaml/goAMLSchema.xsd', import.meta.url), 'utf8');
const validate = (xml: string) => validateXML({ xml: { fileName: 'report.xml', contents: xml }, schema: { fileName: 'goAMLSchema.xsd', contents: XSD } });

const HOSTILE_NAME = 'Eve </last_name><script>alert(1)</script> & "Co" ]]>';
const HOSTILE_NOTE = 'note <img src=x onerror=alert(1)> & </td></tr> ]]>';
const NARRATIVE = 'Funds gathered from new senders & passed on within days. <b>not markup</b>';

let world: DetectionWorld;
let app: FastifyInstance;
interface Session {
  cookie: string;
  csrf: string;
  userId: string;
}
let analyst: Session;
let supervisor: Session;
let outsider: Session;
const ids = {} as Record<'case' | 'quietCase' | 'otherCase', string>;

const call = (s: Session | undefined, method: 'GET' | 'POST', url: string, body?: unknown) =>
  app.inject({
    method,
    url,
    headers: { ...(s ? { cookie: `${SESSION_COOKIE}=${s.cookie}`, [CSRF_HEADER]: s.csrf } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });

const session = (tenant: string, email: string, role: 'analyst' | 'supervisor'): Promise<Session> => signIn(app, world.api.db.pool, world.api.clock.now(), tenant, email, role);

// Episodes and alerts are detection's; here they are written directly, as detection would.
async function seedEpisode(tenant: string, members: Array<[string, string, 'subject' | 'counterparty']>) {
  const id = uuidv7(Date.now());
  await world.api.db.pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, disposition, created_at, updated_at)
     VALUES ($1, $2, 'open', 'high', '2026-08-24T00:00:00Z', '2026-08-25T00:00:00Z', 2, 'open', NULL, '2026-08-24T00:00:00Z', '2026-08-25T00:00:00Z')`,
    [tenant, id],
  );
  for (const [kind, subject, role] of members) {
    await world.api.db.pool.query('INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at) VALUES ($1, $2, $3, $4, $5, now())', [tenant, id, kind, subject, role]);
  }
  return id;
}
async function seedAlert(tenant: string, episode: string, a: { detector: string; typology: string; subject: [string, string]; at: string; explanation: string; evidence: Record<string, unknown> }) {
  const id = uuidv7(Date.parse(a.at));
  await world.api.db.pool.query(
    `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id, window_from, window_to,
                         score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
     VALUES ($1, $2, 'live', 1, $3, 1, $4, $5, $6, NULL, $7::timestamptz - interval '7 days', $7, 0.8, 'high', 'open', $8, $9, 1, $10, $7, $7)`,
    [tenant, id, a.detector, a.typology, a.subject[0], a.subject[1], a.at, `${a.typology} on ${a.subject[1]}`, a.explanation, episode],
  );
  await world.api.db.pool.query(
    `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence) VALUES ($1, $2, 1, $3, $3, 0.8, 'high', $4)`,
    [tenant, id, a.at, JSON.stringify(a.evidence)],
  );
  return id;
}

beforeAll(async () => {
  world = await startDetectionWorld();
  const pool = world.api.db.pool;
  const tenant = world.api.tenantId;
  await createTenant(pool, 'other', 'EUR');
  // 1 KWD = 3.2571 USD; no JPY rate at all.
  const rates = await loadRateFile(pool, 'kwd.csv', 'base,quote,rate,rate_scale,valid_from\nKWD,USD,3.2571,4,2026-01-01T00:00:00Z\n', world.api.clock.now());
  expect(rates.kind).toBe('loaded');
  await world.party('mule', { type: 'person', legal_names: ['Jan de Vries'], jurisdictions: { nationality: 'NL', residency: 'NL' } });
  await world.party('acme', { type: 'business', legal_names: ['Acme Trading & Sons <Ltd>'], jurisdictions: { registration: 'GB' }, birth_or_inc_date: '2001-05-04' });
  await world.party('s1', { type: 'person', legal_names: ['Ana Silva'] });
  await world.party('s2', { type: 'person', legal_names: [HOSTILE_NAME] });
  await world.party('s3', { type: 'person', legal_names: ['Omar'] });
  await world.account('mule-acct', 'mule');
  await world.account('acme-acct', 'acme');
  await world.account('s1-acct', 's1');
  await world.account('s2-acct', 's2');
  await world.account('s3-acct', 's3', { asset: 'KWD' });
  await world.movements([
    { id: 'mv-1', from: ['s1-acct', 's1'], to: ['mule-acct', 'mule'], value: 250_000, at: '2026-08-20T10:00:00Z' },
    { id: 'mv-2', from: ['s2-acct', 's2'], to: ['mule-acct', 'mule'], value: 199_999, at: '2026-08-21T10:00:00Z' },
    // A three-decimal asset: 1,234.567 KWD.
    { id: 'mv-3', from: ['s3-acct', 's3'], to: ['mule-acct', 'mule'], value: 1_234_567, asset: 'KWD', scale: 3, at: '2026-08-22T10:00:00Z' },
    {
      id: 'mv-4',
      from: [null, null],
      to: ['mule-acct', 'mule'],
      value: 75_050,
      type: 'wire',
      at: '2026-08-22T12:00:00Z',
      extra: { debit: { counterparty: { institution: 'Bank <B> & Co', country: 'DE', name_as_given: 'Mr. X', instrument_ref: 'DE89370400440532013000' } } },
    },
    { id: 'mv-5', from: ['mule-acct', 'mule'], to: ['acme-acct', 'acme'], value: 600_000, at: '2026-08-23T10:00:00Z' },
    // Not priced: no JPY rate.
    { id: 'mv-6', from: ['s1-acct', 's1'], to: ['mule-acct', 'mule'], value: 100_000, asset: 'JPY', scale: 0, at: '2026-08-23T11:00:00Z' },
  ]);
  await world.settle();
  ({ app } = await createConsole({
    config: loadConfig({ LOG_LEVEL: 'silent' }),
    pool,
    masterKey: world.api.masterKey,
    clock: world.api.clock,
    logger: false,
  }));
  await app.ready();
  analyst = await session(tenant, 'ana@example.com', 'analyst');
  supervisor = await session(tenant, 'sue@example.com', 'supervisor');
  outsider = await session('other', 'out@example.com', 'supervisor');
  const saved = await putReportingEntity(
    pool,
    tenant,
    reportingEntitySchema.parse({
      rentity_id: 4711,
      rentity_branch: 'Head office',
      institution_name: 'Example Payments Ltd',
      institution_code: 'EXPLGB2L',
      country_code: 'GB',
      reporting_person: { first_name: 'Rita', last_name: 'Reporter', email: 'mlro@example.com' },
      location: { type: '1', address: '1 Example Street', city: 'London', zip: 'EC1A 1BB' },
      lookups: { transmode: { p2p: 'A', wire: 'B' }, funds: { p2p: 'K' } },
    }),
    world.api.clock.now(),
  );
  expect(saved.kind).toBe('saved');

  ids.case = await seedEpisode(tenant, [['account', 'mule-acct', 'subject'], ['party', 'mule', 'subject'], ['account', 'acme-acct', 'counterparty']]);
  await seedAlert(tenant, ids.case, {
    detector: 'fan_in',
    typology: 'Fan-in (smurfing)',
    subject: ['account', 'mule-acct'],
    at: '2026-08-24T00:00:00Z',
    explanation: 'Five new senders paid in within four days.',
    evidence: {
      movements: ['mv-3', 'mv-1', 'mv-2', 'mv-4', 'mv-6', 'mv-missing'],
      counterparties: ['account:s1-acct', 'account:s2-acct'],
      amounts: { total: '926160', count: 4, asset: 'USD', in: '926160', out: '0' },
      window: { from: '2026-08-17T00:00:00Z', to: '2026-08-24T00:00:00Z' },
      thresholds: [
        { name: 'new_senders', threshold: 8, observed: 4 },
        { name: 'total', threshold: '500000', observed: '926160' },
      ],
    },
  });
  await seedAlert(tenant, ids.case, {
    detector: 'pass_through',
    typology: 'Pass-through',
    subject: ['party', 'mule'],
    at: '2026-08-25T00:00:00Z',
    explanation: 'Most of the inflow left again within a day.',
    evidence: { movements: ['mv-5'], counterparties: ['account:acme-acct'], amounts: { total: '600000', count: 1, asset: 'USD' }, window: { from: '2026-08-18T00:00:00Z', to: '2026-08-25T00:00:00Z' }, thresholds: [] },
  });
  const changed = await call(supervisor, 'POST', `/console/v1/episodes/epsd_${ids.case}/status`, { status: 'investigating', reason: HOSTILE_NOTE });
  expect(changed.statusCode, changed.body).toBe(200);
  await addCaseNote(pool, tenant, ids.case, analyst.userId, HOSTILE_NOTE, new Date('2026-09-01T09:00:00Z'));
  const proposal = await insertProposal(pool, tenant, ids.case, NARRATIVE, analyst.userId, new Date('2026-09-01T10:00:00Z'));
  await decideProposal(pool, tenant, proposal, 'approved', supervisor.userId, 'agreed', new Date('2026-09-01T11:00:00Z'));

  // A case whose alert cites no movement: its subjects are reported as the activity.
  ids.quietCase = await seedEpisode(tenant, [['party', 'acme', 'subject']]);
  await seedAlert(tenant, ids.quietCase, { detector: 'sanctions_hit_reported', typology: 'Sanctions hit', subject: ['party', 'acme'], at: '2026-08-25T00:00:00Z', explanation: 'Screening reported a hit.', evidence: { movements: [], thresholds: [] } });
  ids.otherCase = await seedEpisode('other', [['party', 'zed', 'subject']]);
}, 180_000);
afterAll(async () => {
  await app?.close();
  await world?.close();
});

// The elements of one name in our own rendering (one element per line, text on one line).
const texts = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1]);
const blocks = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>[\\s\\S]*?</${name}>`, 'g'))].map((m) => m[0]);

describe('goAML report', () => {
  it('is valid against the published goAML schema, with the movements as transactions in the local currency', async () => {
    const res = await call(analyst, 'GET', `/console/v1/cases/epsd_${ids.case}/goaml.xml`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="goaml-epsd_${ids.case}.xml"`);
    const xml = res.body;
    const result = await validate(xml);
    expect(result.errors.map((e) => e.rawMessage)).toEqual([]);
    expect(result.valid).toBe(true);

    expect(texts(xml, 'rentity_id')).toEqual(['4711']);
    expect(texts(xml, 'report_code')).toEqual(['STR']);
    expect(texts(xml, 'entity_reference')).toEqual([`epsd_${ids.case}`]);
    expect(texts(xml, 'submission_date')).toEqual(['2026-09-01T12:00:00']);
    expect(texts(xml, 'currency_code_local')).toEqual(['USD']);
    // Oldest first; mv-6 (no JPY rate) and mv-missing (never received) are not transactions.
    expect(texts(xml, 'transactionnumber')).toEqual(['mv-1', 'mv-2', 'mv-3', 'mv-4', 'mv-5']);
    expect(texts(xml, 'amount_local')).toEqual(['2500.00', '1999.99', '4021.11', '750.50', '6000.00']);
    expect(texts(xml, 'transmode_code')).toEqual(['A', 'A', 'A', 'B', 'A']);
    expect(texts(xml, 'date_transaction')[2]).toBe('2026-08-22T10:00:00');
    // The KWD movement: its own amount at scale 3 and the rate, in local units per KWD.
    const kwd = blocks(xml, 'transaction')[2]!;
    expect(blocks(kwd, 'from_foreign_currency')[0]).toContain('<foreign_currency_code>KWD</foreign_currency_code>');
    expect(texts(kwd, 'foreign_amount')).toEqual(['1234.567']);
    expect(texts(kwd, 'foreign_exchange_rate')).toEqual(['3.2571']);
    expect(texts(kwd, 'from_funds_code')).toEqual(['K']);
    // Accounts with their holders: a person as signatory, a business as the account's entity.
    const first = blocks(xml, 'transaction')[0]!;
    expect(blocks(first, 'from_account')[0]).toContain('<account>s1-acct</account>');
    expect(blocks(first, 'from_account')[0]).toContain('<institution_name>Example Payments Ltd</institution_name>');
    expect(texts(blocks(first, 'signatory')[0]!, 'first_name')).toEqual(['Ana']);
    const fifth = blocks(xml, 'transaction')[4]!;
    expect(texts(blocks(fifth, 't_entity')[0]!, 'name')).toEqual(['Acme Trading &amp; Sons &lt;Ltd&gt;']);
    expect(texts(fifth, 'incorporation_date')).toEqual(['2001-05-04T00:00:00']);
    expect(texts(fifth, 'to_country')).toEqual(['US']);
    // The external sender: its institution and instrument, its country.
    const wire = blocks(xml, 'transaction')[3]!;
    expect(texts(blocks(wire, 'from_account')[0]!, 'institution_name')).toEqual(['Bank &lt;B&gt; &amp; Co']);
    expect(texts(blocks(wire, 'from_account')[0]!, 'account')).toEqual(['DE89370400440532013000']);
    expect(texts(wire, 'from_country')).toEqual(['DE']);
    // The approved narrative is the reason; what was left out is said there.
    const reason = texts(xml, 'reason')[0]!;
    expect(reason).toContain('Funds gathered from new senders &amp; passed on within days. &lt;b&gt;not markup&lt;/b&gt;');
    expect(reason).toContain('not reported as transactions: mv-6.');
    expect(reason).toContain('Typologies: Fan-in (smurfing); Pass-through.');
    expect(texts(xml, 'indicator')).toEqual(['-']);
  });

  it('escapes hostile names: the document still parses and the text is the name', async () => {
    const xml = (await call(analyst, 'GET', `/console/v1/cases/epsd_${ids.case}/goaml.xml`)).body;
    expect(xml).not.toContain('<script>');
    const second = blocks(xml, 'transaction')[1]!;
    // splitName: the last word is the last name.
    const sender = blocks(second, 'from_account')[0]!;
    expect(texts(sender, 'first_name')).toEqual(['Eve &lt;/last_name&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; "Co"']);
    expect(texts(sender, 'last_name')).toEqual([']]&gt;']);
    expect(texts(sender, 'account_name')).toEqual(['Eve &lt;/last_name&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; "Co" ]]&gt;']);
    expect((await validate(xml)).valid).toBe(true);
  });

  it('reports the subjects as the activity when no movement can be reported', async () => {
    const res = await call(analyst, 'GET', `/console/v1/cases/epsd_${ids.quietCase}/goaml.xml`);
    expect(res.statusCode, res.body).toBe(200);
    expect((await validate(res.body)).errors).toEqual([]);
    expect(res.body).not.toContain('<transaction>');
    expect(texts(blocks(res.body, 'report_party')[0]!, 'name')).toEqual(['Acme Trading &amp; Sons &lt;Ltd&gt;']);
    // No approved report: the alerts' explanations are the reason.
    expect(texts(res.body, 'reason')[0]).toContain('Screening reported a hit.');
  });

  it('is audited as an export', async () => {
    await call(analyst, 'GET', `/console/v1/cases/epsd_${ids.case}/goaml.xml`);
    const { rows } = await world.api.db.pool.query(
      `SELECT details FROM console_audit WHERE tenant_id = $1 AND subject = $2 AND action = 'case.exported' AND actor_user_id = $3`,
      [world.api.tenantId, `epsd_${ids.case}`, analyst.userId],
    );
    expect(rows.at(-1)!.details).toEqual({ format: 'goaml', transactions: 5, left_out: 2 });
  });
});

describe('tenancy and access', () => {
  it('answers 404 for a case of another tenant, an unknown or malformed id, and 401 without a session', async () => {
    for (const path of ['goaml.xml', 'file.html']) {
      const other = await call(outsider, 'GET', `/console/v1/cases/epsd_${ids.case}/${path}`);
      expect(other.statusCode).toBe(404);
      expect(other.json().code).toBe('svc:resource/not_found');
      expect(other.body).not.toContain('mule');
      expect((await call(analyst, 'GET', `/console/v1/cases/epsd_${ids.otherCase}/${path}`)).statusCode).toBe(404);
      expect((await call(analyst, 'GET', `/console/v1/cases/epsd_${uuidv7(Date.now())}/${path}`)).statusCode).toBe(404);
      expect((await call(analyst, 'GET', `/console/v1/cases/not-an-id/${path}`)).statusCode).toBe(404);
      expect((await call(undefined, 'GET', `/console/v1/cases/epsd_${ids.case}/${path}`)).statusCode).toBe(401);
      const query = await call(analyst, 'GET', `/console/v1/cases/epsd_${ids.case}/${path}?format=pdf`);
      expect(query.statusCode).toBe(400);
      expect(query.json().code).toBe('svc:request/invalid_parameter');
    }
  });

  it('refuses goAML for a tenant without a reporting entity, naming why', async () => {
    const res = await call(outsider, 'GET', `/console/v1/cases/epsd_${ids.otherCase}/goaml.xml`);
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toContain('reporting entity');
  });
});

describe('movements cited long ago', () => {
  it('are named by the export, as loaded or left out, however many evidence entries came since', async () => {
    const episode = await seedEpisode('other', [['account', 'long-1', 'subject']]);
    const alert = await seedAlert('other', episode, { detector: 'fan_in', typology: 'fan_in', subject: ['account', 'long-1'], at: '2026-08-25T00:00:00Z', explanation: 'x', evidence: { movements: ['mv-cited-first'] } });
    // 200 later hits, each with its own evidence entry citing nothing new.
    await world.api.db.pool.query(
      `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence)
       SELECT 'other', $1, s, now(), now(), 0.8, 'high', '{"movements": []}'::jsonb FROM generate_series(2, 201) AS s`,
      [alert],
    );
    const file = await loadCaseFile(world.api.db.pool, 'other', episode, async () => registryWith(new Map()));
    expect(file!.alerts[0]!.evidence).toHaveLength(200);
    expect(file!.movementsLeftOut).toEqual(['mv-cited-first']);
  });
});

describe('corrected movements', () => {
  it('are loaded with the movements correcting them, to the chain\'s last link, and marked', async () => {
    const tenant = world.api.tenantId;
    await world.movement({ id: 'cx-orig', from: ['mule-acct', 'mule'], to: ['acme-acct', 'acme'], value: 950_000, at: '2026-08-20T10:00:00Z' });
    await world.movement({ id: 'cx-fix-1', from: ['mule-acct', 'mule'], to: ['acme-acct', 'acme'], value: 960_000, at: '2026-08-20T11:00:00Z', extra: { links: { correction_of: 'cx-orig' }, correction_reason: 'amount' } });
    await world.movement({ id: 'cx-fix-2', from: ['mule-acct', 'mule'], to: ['acme-acct', 'acme'], value: 970_000, at: '2026-08-20T12:00:00Z', extra: { links: { correction_of: 'cx-fix-1' }, correction_reason: 'amount again' } });
    await world.settle();
    const episode = await seedEpisode(tenant, [['account', 'mule-acct', 'subject']]);
    await seedAlert(tenant, episode, { detector: 'structuring', typology: 'structuring', subject: ['account', 'mule-acct'], at: '2026-08-20T10:00:00Z', explanation: 'x', evidence: { movements: ['cx-orig'] } });
    const file = await loadCaseFile(world.api.db.pool, tenant, episode, async () => registryWith(new Map()));
    expect(file!.movements.map((m) => [m.external_id, m.corrected_by])).toEqual([
      ['cx-orig', 'cx-fix-1'],
      ['cx-fix-1', 'cx-fix-2'],
      ['cx-fix-2', null],
    ]);
  });
});

describe('case file', () => {
  it('is print-ready HTML under the console CSP, with money by asset and scale, evidence, narrative, notes and audit', async () => {
    const res = await call(analyst, 'GET', `/console/v1/cases/epsd_${ids.case}/file.html`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    const page = res.body;
    expect(page).not.toMatch(/<script|<style|<[^>]*\s(style|on\w+)=/i);
    expect(page).toContain('<link rel="stylesheet" href="/console/v1/case-file.css">');
    // Money by asset and scale.
    expect(page).toContain('2,500.00 USD');
    expect(page).toContain('1,234.567 KWD');
    expect(page).toContain('4,021.11 USD');
    expect(page).toContain('100,000 JPY');
    expect(page).toContain('6,000.00 USD');
    // Thresholds as observed / threshold, money formatted.
    expect(page).toContain('<td>new_senders</td><td>4 / 8</td>');
    expect(page).toContain('<td>total</td><td>9,261.60 USD / 5,000.00 USD</td>');
    // Evidence movements link to the movements table.
    expect(page).toMatch(/<a href="#mv-3">mv-3<\/a>/);
    expect(page).toMatch(/<tr id="mv-3"><td>mv-3<\/td>/);
    // Narrative, with who proposed and who approved.
    expect(page).toContain('Funds gathered from new senders &amp; passed on within days. &lt;b&gt;not markup&lt;/b&gt;');
    expect(page).toContain('proposed by ana@example.com');
    expect(page).toContain('approved by sue@example.com');
    // Notes and the hostile reason, escaped.
    expect(page).toContain('note &lt;img src=x onerror=alert(1)&gt; &amp; &lt;/td&gt;&lt;/tr&gt; ]]&gt;');
    expect(page).not.toContain('<img');
    expect(page).toContain('Eve &lt;/last_name&gt;&lt;script&gt;');
    // The audit trail: who did what, including this export.
    const audit = page.slice(page.indexOf('<section id="audit">'));
    expect(audit).toMatch(/<td>sue@example\.com<\/td><td>case\.status_changed<\/td>/);
    expect(audit).toMatch(/<td>ana@example\.com<\/td><td>case\.exported<\/td><td class="text">\{&quot;format&quot;:&quot;case_file&quot;\}<\/td>/);
    const history = page.slice(page.indexOf('<section id="history">'), page.indexOf('<section id="audit">'));
    expect(history).toMatch(/<td>sue@example\.com<\/td><td>investigating<\/td>/);
  });

  it('serves its stylesheet, with print rules', async () => {
    const res = await call(analyst, 'GET', '/console/v1/case-file.css');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(res.body).toContain('@media print');
  });
});
