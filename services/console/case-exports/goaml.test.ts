import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { isoRegistry } from '../../../schemas/assets/registry.ts';
import type { CaseFile } from './case-file.ts';
import { goamlReport } from './goaml.ts';
import { reportingEntitySchema } from './reporting-entity.ts';
import type { CaseMovementRow } from '../queries/case-timeline.ts';
import { renderXml } from './xml-writer.ts';

// The mapping on hand-built cases, for what the planted case of case-exports.test.ts does not
// reach: long ids, unmapped codes, a tenant whose base asset goAML cannot name.
const XSD = readFileSync(new URL('../../../test/fixtures/goaml/goAMLSchema.xsd', import.meta.url), 'utf8');
const NOW = new Date('2026-09-01T12:00:00Z');
const ENTITY = reportingEntitySchema.parse({
  rentity_id: 1,
  rentity_branch: 'HQ',
  institution_name: 'Example Payments Ltd',
  institution_code: 'EXPL',
  country_code: 'GB',
  reporting_person: { first_name: 'Rita', last_name: 'Reporter' },
  location: { type: '-', address: '1 Example Street', city: 'London' },
});
const LONG_ID = `m-${'x'.repeat(150)}`;

function movement(over: Partial<CaseMovementRow>): CaseMovementRow {
  return {
    external_id: 'm-1',
    event_id: '01a05cd7-2a00-7f14-b527-769af0078e9c',
    occurred_at: new Date('2026-08-20T10:00:00Z'),
    type: 'deposit',
    status: 'completed',
    amount_value: '12345',
    amount_asset: 'USD',
    amount_scale: 2,
    debit_account_id: null,
    debit_party_id: 'solo',
    credit_account_id: null,
    credit_party_id: null,
    normalized: null,
    data: {},
    corrected_by: null,
    ...over,
  };
}

function caseFile(over: Partial<CaseFile>): CaseFile {
  return {
    tenantId: 't1',
    baseAsset: 'USD',
    assets: isoRegistry,
    case: {
      episode_id: '01a21c14-9622-7f23-9364-f83116bb8153',
      status: 'open',
      severity: 'high',
      case_status: 'open',
      disposition: null,
      first_alert_at: NOW,
      last_alert_at: NOW,
      alert_count: 1,
      created_at: NOW,
      updated_at: NOW,
      subjects: [{ kind: 'party', external_id: 'solo' }],
      related: [],
      base_asset: 'USD',
    },
    assignee: null,
    alerts: [
      {
        alert_id: '01a21c14-9622-7f23-9364-f83116bb8154',
        status: 'open',
        detector_id: 'round_amounts',
        typology: 'Round amounts',
        subject_kind: 'party',
        subject_id: 'solo',
        severity: 'medium',
        score: 0.5,
        window_from: NOW,
        window_to: NOW,
        summary: 'Round sums.',
        explanation: 'Many round sums.',
        created_at: NOW,
        evidence: [{ seq: 1, event_at: NOW, severity: 'medium', evidence: { movements: ['m-1', LONG_ID] } }],
      },
    ],
    movements: [],
    movementsLeftOut: [],
    parties: new Map([['solo', { type: 'person', status: 'active', created_at: '2026-01-01T00:00:00Z', legal_names: ['Cher'] }]]),
    accounts: new Map(),
    actions: [],
    audit: [],
    auditTruncated: false,
    views: { views: 0, viewers: 0, first_at: null, last_at: null },
    notes: [],
    notesTruncated: false,
    report: null,
    ...over,
  };
}

const valid = async (xml: string) => (await validateXML({ xml: { fileName: 'r.xml', contents: xml }, schema: { fileName: 's.xsd', contents: XSD } })).errors.map((e) => e.rawMessage);

describe('goAML mapping', () => {
  it('hashes an id too long for goAML (keeping it whole in comments) and writes "-" for unmapped codes', async () => {
    const file = caseFile({ movements: [movement({}), movement({ external_id: LONG_ID, debit_party_id: null, credit_account_id: 'far', data: { credit: { counterparty: { country: 'FR' } } } })] });
    const outcome = goamlReport(file, ENTITY, NOW);
    if (outcome.kind !== 'report') throw new Error(outcome.kind);
    const xml = renderXml(outcome.document);
    expect(await valid(xml)).toEqual([]);
    expect(xml).toMatch(/<transactionnumber>sha256:[0-9a-f]{64}<\/transactionnumber>/);
    expect(xml).toContain(`<comments>movement external id: ${LONG_ID}</comments>`);
    expect(xml).toContain('<transmode_code>-</transmode_code>');
    expect(xml).toContain('<from_funds_code>-</from_funds_code>');
    expect(xml).toContain('<indicator>-</indicator>');
    // A one-word name: the first name is unknown.
    expect(xml).toMatch(/<from_person>\s*<first_name>-<\/first_name>\s*<last_name>Cher<\/last_name>\s*<comments>party id: solo<\/comments>/);
    // No party and no counterparty data: an entity of unknown name; the receiving account we do
    // not know: our institution, its country from the movement.
    expect(xml).toMatch(/<from_entity>\s*<name>-<\/name>\s*<\/from_entity>/);
    expect(xml).toContain('<to_country>FR</to_country>');
    expect(xml).toContain('<amount_local>123.45</amount_local>');
  });

  it('maps indicators and codes the tenant set, and uses the FIU code per detector once', async () => {
    const entity = { ...ENTITY, lookups: { transmode: { deposit: 'C' }, funds: { deposit: 'A' }, indicators: { round_amounts: '1001M' } } };
    const file = caseFile({ movements: [movement({})] });
    file.alerts.push({ ...file.alerts[0]!, alert_id: '01a21c14-9622-7f23-9364-f83116bb8155' });
    const outcome = goamlReport(file, entity, NOW);
    if (outcome.kind !== 'report') throw new Error(outcome.kind);
    const xml = renderXml(outcome.document);
    expect(xml).toContain('<transmode_code>C</transmode_code>');
    expect(xml).toContain('<from_funds_code>A</from_funds_code>');
    expect([...xml.matchAll(/<indicator>([^<]*)<\/indicator>/g)].map((m) => m[1])).toEqual(['1001M']);
  });

  it('reports a corrected movement by its correction, and names both in the reason', async () => {
    const file = caseFile({
      movements: [movement({ external_id: 'm-orig', amount_value: '950000', corrected_by: 'm-fix' }), movement({ external_id: 'm-fix', amount_value: '960000' })],
    });
    const outcome = goamlReport(file, ENTITY, NOW);
    if (outcome.kind !== 'report') throw new Error(outcome.kind);
    const xml = renderXml(outcome.document);
    expect(await valid(xml)).toEqual([]);
    expect([...xml.matchAll(/<transactionnumber>([^<]*)<\/transactionnumber>/g)].map((m) => m[1])).toEqual(['m-fix']);
    expect(xml).toContain('<amount_local>9600.00</amount_local>');
    expect(xml).toContain('Movements corrected since, reported as corrected: m-orig (by m-fix).');
  });

  it('refuses a tenant whose base asset is not an ISO 4217 currency', () => {
    expect(goamlReport(caseFile({ baseAsset: 'X-PTS' }), ENTITY, NOW)).toEqual({ kind: 'local_currency_not_iso', asset: 'X-PTS' });
  });
});
