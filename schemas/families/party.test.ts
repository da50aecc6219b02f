import { describe, it } from 'vitest';
import {
  COUNTRY, DATE_TIME, PAN, REMOVE, SCALE, SCHEMA,
  chars, check, describeField, enumRule, expectAccepted, expectRefused, items, onData, textRule,
} from '../validation/test-kit.ts';

// Party data (family party), field by field as the spec's table states it.
const PARTY_TYPES = ['person', 'business', 'merchant', 'agent', 'financial_institution', 'internal', 'government', 'ngo', 'trust', 'other'];
const IDENTIFIER_TYPES = ['national_id', 'tax_id', 'passport', 'phone', 'email', 'other'];
const VERIFICATION = ['verified', 'unverified', 'pending', 'failed'];
const SCREENING = ['clear', 'potential_match', 'confirmed_match', 'pending', 'unknown'];
const SEGMENTS = ['consumer', 'merchant', 'remittance_agent', 'cash_agent', 'payroll', 'marketplace', 'financial_institution', 'other'];

const identifier = (i: number) => ({ type: 'other', value: `id-${i}` });
const address = (i: number) => ({ line1: `${i} High Street` });

describeField('party', 'type', { required: true, ...enumRule(PARTY_TYPES) });
describeField('party', 'status', { required: true, ...textRule(1, 64) });
describeField('party', 'created_at', { required: true, ...DATE_TIME });

describeField('party', 'legal_names', {
  required: false,
  accept: [[], ['Ada Lovelace', 'Augusta Ada King'], items(20, (i) => `name ${i}`)],
  refuse: [items(21, (i) => `name ${i}`), 'Ada Lovelace', { name: 'Ada' }],
});
// A name no store downstream can hold (U+0000, a lone surrogate) is refused at the edge like any
// text field.
describeField('party', 'legal_names.1', { accept: [''], refuse: [7, null, 'a\u0000b', 'a\ud800b'], path: 'event.data.legal_names.1' });

describeField('party', 'birth_or_inc_date', {
  required: false,
  accept: ['1990-12-10', '2000-02-29', '1815-12-10'],
  refuse: ['1990-02-30', '1900-02-29', '1990-13-01', '1990-12-10T00:00:00Z', '19901210', '1990-1-10', '10/12/1990', '', 19901210],
});

describeField('party', 'identifiers', {
  required: false,
  accept: [[], items(50, identifier)],
  refuse: [items(51, identifier), identifier(0), 'ada@example.com'],
});
describeField('party', 'identifiers.0.type', { required: true, ...enumRule(IDENTIFIER_TYPES) });
describeField('party', 'identifiers.0.value', { required: true, ...textRule(1, 256) });
describeField('party', 'identifiers.0.verification_status', { required: false, ...enumRule(VERIFICATION) });

describeField('party', 'jurisdictions', { required: false, accept: [{}], refuse: ['GB', ['GB']] });
for (const member of ['nationality', 'residency', 'registration']) {
  describeField('party', `jurisdictions.${member}`, { required: false, ...COUNTRY });
}

describeField('party', 'addresses', {
  required: false,
  accept: [[], [{}], items(20, address)],
  refuse: [items(21, address), address(0), '1 High Street'],
});
describeField('party', 'addresses.0.line1', { required: false, ...textRule(0, 256) });
describeField('party', 'addresses.0.line2', { required: false, ...textRule(0, 256) });
describeField('party', 'addresses.0.city', { required: false, ...textRule(0, 128) });
describeField('party', 'addresses.0.region', { required: false, ...textRule(0, 128) });
describeField('party', 'addresses.0.postal_code', { required: false, ...textRule(0, 32) });
describeField('party', 'addresses.0.country', { required: false, ...COUNTRY });

describeField('party', 'occupation', { required: false, ...textRule(0, 256) });
describeField('party', 'industry_code', { required: false, ...textRule(0, 32) });

describeField('party', 'expected_profile', { required: false, accept: [{}], refuse: ['low', []] });
describeField('party', 'expected_profile.declared_monthly_volume', {
  required: false,
  accept: [{ value: '0', asset: 'EUR', scale: 2 }, { value: '1000000', asset: 'JPY', scale: 0 }],
  refuse: [250000, '2500.00'],
});
describeField('party', 'expected_profile.declared_monthly_volume.value', { refuse: [250000, '2500.00'] });
describeField('party', 'expected_profile.declared_monthly_volume.scale', { required: true, refuse: ['2', 2.5] });
describeField('party', 'expected_profile.declared_monthly_volume.scale', { refuse: [3, 0, -1, 19], code: SCALE });
describeField('party', 'expected_profile.corridors', {
  required: false,
  accept: [[], items(50, (i) => `GB-C${i}`)],
  refuse: [items(51, (i) => `GB-C${i}`), 'GB-US'],
});
describeField('party', 'expected_profile.corridors.0', { accept: ['US-MX'], refuse: [1, 'US\u0000MX', '\udc00'], path: 'event.data.expected_profile.corridors.0' });
describeField('party', 'expected_profile.cash_intensity', { required: false, ...enumRule(['low', 'medium', 'high']) });

describeField('party', 'kyc', { required: false, accept: [{}], refuse: ['standard'] });
describeField('party', 'kyc.tier', { required: false, ...textRule(1, 64) });
describeField('party', 'kyc.updated_at', { required: false, ...DATE_TIME });

describeField('party', 'screening_status_reported', { required: false, accept: [{ status: 'unknown' }], refuse: ['clear', ['clear']] });
describeField('party', 'screening_status_reported.status', { required: true, ...enumRule(SCREENING) });
describeField('party', 'screening_status_reported.pep', { required: false, accept: [true, false], refuse: ['true', 0, null] });
describeField('party', 'screening_status_reported.as_of', { required: false, ...DATE_TIME });
describeField('party', 'screening_status_reported.provider', { required: false, ...textRule(0, 128) });

describeField('party', 'segment', { required: false, ...enumRule(SEGMENTS) });
describeField('party', 'external_ref', { required: false, ...textRule(1, 256) });
describeField('party', 'correction_reason', { required: false, ...textRule(0, 256) });

describe('party data as a whole', () => {
  it('accepts the minimal party: type, status, created_at', () =>
    expectAccepted(check('party', (e) => {
      e.data = { type: 'business', status: 'onboarding', created_at: '2025-01-15T09:30:00+01:00' };
    })));

  it('refuses a member the table does not list', () => {
    expectRefused(check('party', onData('nickname', 'Ada')), SCHEMA, 'event.data.nickname');
    expectRefused(check('party', onData('received_at', '2026-09-01T12:00:00Z')), SCHEMA, 'event.data.received_at');
  });

  it('refuses a card number in any string field, at that field', () => {
    const card = '4111 1111 1111 1111';
    expectRefused(check('party', onData('legal_names.0', card)), PAN, 'event.data.legal_names.0');
    expectRefused(check('party', onData('identifiers.0.value', card)), PAN, 'event.data.identifiers.0.value');
    expectRefused(check('party', onData('addresses.0.line2', card)), PAN, 'event.data.addresses.0.line2');
    expectRefused(check('party', onData('occupation', card)), PAN, 'event.data.occupation');
    expectRefused(check('party', onData('expected_profile.corridors.0', card)), PAN, 'event.data.expected_profile.corridors.0');
  });

  it('checks the declared monthly volume against the tenant registry', () =>
    expectRefused(check('party', onData('expected_profile.declared_monthly_volume', { value: '1', asset: 'ZZZ', scale: 2 })), SCALE,
      'event.data.expected_profile.declared_monthly_volume.asset'));

  it('sets no length limit on a legal name (the table has none)', () =>
    expectAccepted(check('party', onData('legal_names', [chars(1000)]))));

  it('accepts a party with every optional member absent', () =>
    expectAccepted(check('party', ...['legal_names', 'birth_or_inc_date', 'identifiers', 'jurisdictions', 'addresses', 'occupation',
      'expected_profile', 'kyc', 'screening_status_reported', 'segment'].map((k) => onData(k, REMOVE)))));
});
