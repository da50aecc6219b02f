import { describe, expect, it } from 'vitest';
import {
  COUNTRY, IP, PAN, SCALE, SCHEMA,
  chars, check, describeField, enumRule, expectAccepted, expectRefused, findings, items, onData, textRule,
} from '../validation/test-kit.ts';

// Movement data (family movement; immutable fact), field by field as the spec's table states it.
const MOVEMENT_TYPES = [
  'p2p', 'merchant_payment', 'deposit', 'withdrawal', 'cash_in', 'cash_out', 'remittance',
  'ach', 'wire', 'refund', 'reversal', 'settlement', 'internal_transfer', 'other',
];
const fee = (i: number) => ({ value: String(i), asset: 'USD', scale: 2 });

describeField('movement', 'type', { required: true, ...enumRule(MOVEMENT_TYPES) });
describeField('movement', 'status', { required: true, ...enumRule(['completed', 'pending', 'failed', 'reversed']) });

describeField('movement', 'amount', {
  required: true,
  accept: [{ value: '0', asset: 'USD', scale: 2 }, { value: '-12550', asset: 'USD', scale: 2 }, { value: '5', asset: 'JPY', scale: 0 }],
  refuse: [12550, '125.50', null, [fee(1)]],
});
describeField('movement', 'amount.value', { required: true, accept: ['1', '-1', '0'], refuse: [12550, '125.50', '1,000', '', ' 1'] });
describeField('movement', 'amount.asset', { required: true, accept: ['EUR'], refuse: ['usd', 'US', 'X-A', 840] });
describeField('movement', 'amount.scale', { required: true, refuse: ['2', 2.5, null] });
// An integer scale the registry cannot hold (past 0-18) does not match it either.
describeField('movement', 'amount.scale', { accept: [2], refuse: [0, 3, -1, 19, 1000], code: SCALE });

for (const leg of ['debit', 'credit'] as const) {
  describeField('movement', leg, { required: true, accept: [{}, { account_id: 'a' }, { party_id: 'p' }], refuse: ['acct-1', null, []] });
  describeField('movement', `${leg}.account_id`, { required: false, ...textRule(1, 256) });
  describeField('movement', `${leg}.party_id`, { required: false, ...textRule(1, 256) });
  describeField('movement', `${leg}.counterparty`, { required: false, accept: [{}], refuse: ['Bank B', []] });
  describeField('movement', `${leg}.counterparty.institution`, { required: false, ...textRule(1, 128) });
  describeField('movement', `${leg}.counterparty.country`, { required: false, ...COUNTRY });
  describeField('movement', `${leg}.counterparty.name_as_given`, { required: false, ...textRule(0, 256) });
  describeField('movement', `${leg}.counterparty.instrument_ref`, { required: false, ...textRule(1, 256) });
}

describeField('movement', 'links', { required: false, accept: [{}], refuse: ['mv-0', []] });
for (const link of ['reverses', 'refunds', 'settles', 'part_of_batch', 'correction_of']) {
  describeField('movement', `links.${link}`, { required: false, ...textRule(1, 256) });
}

describeField('movement', 'cash', { required: false, accept: [true, false], refuse: ['true', 1, null] });
describeField('movement', 'memo', { required: false, ...textRule(0, 1000) });
describeField('movement', 'memo', {
  accept: ['invoice 12345678', 'ref 4111111111111112', 'iban DE89370400440532013000', 'order 1234567890123456789012'],
  refuse: ['card 4111111111111111', 'card 4111 1111 1111 1111 thanks', '4111-1111-1111-1111', 'amex 378282246310005'],
  code: PAN,
});
for (const field of ['channel', 'rail', 'product']) describeField('movement', field, { required: false, ...textRule(1, 64) });
for (const field of ['agent_party_id', 'instrument_ref', 'device_ref']) describeField('movement', field, { required: false, ...textRule(1, 256) });
describeField('movement', 'ip', { required: false, ...IP });

describeField('movement', 'geo', { required: false, accept: [{}], refuse: ['US', []] });
describeField('movement', 'geo.country', { required: false, ...COUNTRY });
describeField('movement', 'geo.region', { required: false, ...textRule(0, 128) });
describeField('movement', 'geo.lat', { required: false, accept: [-90, 90, 0, 40.7, -33.8688], refuse: [-90.0001, 90.0001, 180, '40.7', null] });
describeField('movement', 'geo.lon', { required: false, accept: [-180, 180, 0, -74, 151.2093], refuse: [-180.0001, 180.0001, 360, '-74', null] });

describeField('movement', 'fees', {
  required: false,
  accept: [[], items(20, fee)],
  refuse: [items(21, fee), fee(1), '25'],
});
describeField('movement', 'fees.0', { refuse: [25, '25', null], path: 'event.data.fees.0' });
describeField('movement', 'fees.0.value', { refuse: [25, '0.25'] });
describeField('movement', 'fees.0.scale', { required: true, refuse: ['2'] });
describeField('movement', 'fees.0.scale', { refuse: [3, 19], code: SCALE });

describeField('movement', 'external_ref', { required: false, ...textRule(1, 256) });
describeField('movement', 'correction_reason', { required: false, ...textRule(0, 256) });

describe('movement data as a whole', () => {
  it('accepts the minimal movement', () =>
    expectAccepted(check('movement', (e) => {
      e.data = { type: 'deposit', status: 'pending', amount: { value: '100', asset: 'EUR', scale: 2 }, debit: {}, credit: {} };
    })));

  it.each(['failed', 'pending', 'reversed'])('accepts a %s movement (evidence)', (status) =>
    expectAccepted(check('movement', onData('status', status))));

  it('accepts every optional member at once', () =>
    expectAccepted(check('movement', (e) => {
      Object.assign(e.data, {
        type: 'reversal', amount: { value: '-12550', asset: 'USD', scale: 2 },
        debit: { account_id: 'a1', party_id: 'p1', counterparty: { institution: 'Bank A', country: 'GB', name_as_given: 'A', instrument_ref: 'i1' } },
        links: { reverses: 'mv-0', refunds: 'mv-0', settles: 'mv-0', part_of_batch: 'b-1', correction_of: 'mv-0' },
        cash: false, rail: 'ach', product: 'p', agent_party_id: 'ag', instrument_ref: 'i', device_ref: 'd',
        geo: { country: 'US', region: 'NY', lat: 40.7, lon: -74 }, external_ref: 'x', correction_reason: 'wrong amount',
      });
    })));

  it('refuses a member the table does not list', () => {
    expectRefused(check('movement', onData('sequence', 1)), SCHEMA, 'event.data.sequence');
    expectRefused(check('movement', onData('debit.counterparty.iban', 'DE89')), SCHEMA, 'event.data.debit.counterparty.iban');
  });

  it('checks every fee against the registry, each at its own index', () => {
    const result = check('movement', onData('fees', [fee(1), { value: '1', asset: 'JPY', scale: 2 }, { value: '1', asset: 'ZZZ', scale: 2 }]));
    expect(result.ok ? undefined : result.code).toBe(SCALE);
    expect(findings(result)).toEqual([[SCALE, 'event.data.fees.1.scale'], [SCALE, 'event.data.fees.2.asset']]);
  });

  it('refuses a card number in a nested string, at that path', () => {
    expectRefused(check('movement', onData('credit.counterparty.name_as_given', 'J Doe 4111 1111 1111 1111')), PAN,
      'event.data.credit.counterparty.name_as_given');
    expectRefused(check('movement', onData('links.correction_of', '4111111111111111')), PAN, 'event.data.links.correction_of');
  });

  it('refuses an overlong memo that also holds a card number with both findings, PAN first', () => {
    const result = check('movement', onData('memo', `${chars(1000)} 4111111111111111`));
    expect(result.ok ? undefined : result.code).toBe(PAN);
    expect(findings(result)).toEqual([[PAN, 'event.data.memo'], [SCHEMA, 'event.data.memo']]);
  });

  it('keeps the memo verbatim when accepted', () => {
    const result = check('movement', onData('memo', '  dinner  '));
    expectAccepted(result);
    if (result.ok) expect(result.event.data).toHaveProperty('memo', '  dinner  ');
  });
});
