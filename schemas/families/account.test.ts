import { describe, it } from 'vitest';
import {
  COUNTRY, DATE_TIME, PAN, SCHEMA,
  check, describeField, enumRule, expectAccepted, expectRefused, onData, textRule,
} from '../validation/test-kit.ts';

// Account data (family account), field by field as the spec's table states it.
const ACCOUNT_TYPES = ['wallet', 'checking', 'savings', 'merchant', 'settlement', 'stored_value', 'loan', 'remittance', 'other'];
const ACCOUNT_STATUSES = [
  'active', 'dormant', 'closed', 'restricted', 'frozen', 'unrestricted',
  'withdrawals_restricted', 'account_restricted', 'transfers_suspended',
];

describeField('account', 'type', { required: true, ...enumRule(ACCOUNT_TYPES) });
describeField('account', 'holder_party_id', { required: true, ...textRule(1, 256) });
describeField('account', 'asset', {
  required: true,
  accept: ['USD', 'JPY', 'KWD', 'X-AB', 'X-USDC', 'X-ABCDEFGHIJ', 'X-0123456789', 'X-B2'],
  refuse: ['usd', 'Usd', 'US', 'USDT', 'X-A', 'X-ABCDEFGHIJK', 'X-usdc', 'X_USDC', 'XUSDC', 'X-US DC', '', 840, { code: 'USD' }],
});
describeField('account', 'status', { required: true, ...enumRule(ACCOUNT_STATUSES) });
describeField('account', 'opened_at', { required: true, ...DATE_TIME });
describeField('account', 'product_code', { required: false, ...textRule(1, 64) });
describeField('account', 'purpose', { required: false, ...textRule(0, 256) });
describeField('account', 'expected_use', { required: false, ...textRule(0, 512) });
describeField('account', 'agent_of_opening_party_id', { required: false, ...textRule(1, 256) });
describeField('account', 'jurisdiction', { required: false, ...COUNTRY });
describeField('account', 'closed_at', { required: false, ...DATE_TIME });
describeField('account', 'closure_reason', { required: false, ...textRule(0, 256) });
describeField('account', 'external_ref', { required: false, ...textRule(1, 256) });
describeField('account', 'correction_reason', { required: false, ...textRule(0, 256) });

describe('account data as a whole', () => {
  it('accepts the minimal account', () =>
    expectAccepted(check('account', (e) => {
      e.data = { type: 'checking', holder_party_id: 'p', asset: 'EUR', status: 'dormant', opened_at: '2020-01-01T00:00:00-05:00' };
    })));

  it('accepts every optional member at once', () =>
    expectAccepted(check('account', (e) => {
      Object.assign(e.data, {
        status: 'closed', product_code: 'WALLET-STD', purpose: 'savings', expected_use: 'payroll', agent_of_opening_party_id: 'agent-1',
        jurisdiction: 'DE', closed_at: '2026-08-01T00:00:00Z', closure_reason: 'customer request', external_ref: 'core-77',
        correction_reason: 'typo in holder',
      });
    })));

  it('refuses a member the table does not list', () => {
    expectRefused(check('account', onData('balance', '100')), SCHEMA, 'event.data.balance');
    expectRefused(check('account', onData('holder', 'party-1')), SCHEMA, 'event.data.holder');
  });

  it('refuses a card number in any string field, at that field', () => {
    expectRefused(check('account', onData('purpose', 'card 4111-1111-1111-1111')), PAN, 'event.data.purpose');
    expectRefused(check('account', onData('external_ref', '4111111111111111')), PAN, 'event.data.external_ref');
  });
});
