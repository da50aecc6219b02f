import { describe, expect, it } from 'vitest';
import {
  COUNTRY, DATE_TIME, PAN, SCHEMA,
  check, describeField, findings, enumRule, expectAccepted, expectRefused, onData, textRule,
} from '../validation/test-kit.ts';

// Instrument data (family instrument), field by field as the spec's table states it.
const INSTRUMENT_TYPES = ['external_bank_account', 'card_token', 'mobile_wallet', 'payment_credential', 'virtual_account', 'other'];
const CARD = '4111111111111111';

describeField('instrument', 'type', { required: true, ...enumRule(INSTRUMENT_TYPES) });
describeField('instrument', 'status', { required: true, ...textRule(1, 64) });
describeField('instrument', 'first_seen_at', { required: true, ...DATE_TIME });
describeField('instrument', 'issuer_ref', { required: false, ...textRule(1, 128) });
describeField('instrument', 'masked_identifier', {
  required: false,
  ...textRule(1, 64),
  accept: ['x', 'x'.repeat(64), '411111******1111', '**** **** **** 1111', '4111 11XX XXXX 1111'],
});
describeField('instrument', 'country', { required: false, ...COUNTRY });
describeField('instrument', 'holder_name_as_entered', { required: false, ...textRule(0, 256) });
describeField('instrument', 'verification_status', { required: false, ...enumRule(['verified', 'unverified', 'pending', 'failed']) });
describeField('instrument', 'fingerprint', { required: false, ...textRule(1, 128) });
describeField('instrument', 'external_ref', { required: false, ...textRule(1, 256) });

describe('instrument data as a whole', () => {
  it('accepts the minimal instrument', () =>
    expectAccepted(check('instrument', (e) => {
      e.data = { type: 'external_bank_account', status: 'verified', first_seen_at: '2025-02-01T00:00:00Z' };
    })));

  it('refuses a member the table does not list (correction_reason is not an instrument member)', () => {
    expectRefused(check('instrument', onData('correction_reason', 'typo')), SCHEMA, 'event.data.correction_reason');
    expectRefused(check('instrument', onData('pan', 'x')), SCHEMA, 'event.data.pan');
  });

  // "A full card number in any field is refused with svc:validation/pan_detected and the field path."
  describe('a full card number', () => {
    for (const field of ['status', 'issuer_ref', 'masked_identifier', 'holder_name_as_entered', 'fingerprint', 'external_ref']) {
      it(`is refused in ${field}`, () => expectRefused(check('instrument', onData(field, CARD)), PAN, `event.data.${field}`));
    }
    it('is refused with spaces or dashes', () => {
      expectRefused(check('instrument', onData('masked_identifier', '4111 1111 1111 1111')), PAN, 'event.data.masked_identifier');
      expectRefused(check('instrument', onData('fingerprint', '5555-5555-5555-4444')), PAN, 'event.data.fingerprint');
    });
    it('is refused in the envelope external_id', () =>
      expectRefused(check('instrument', (e) => { e.external_id = CARD; }), PAN, 'event.external_id'));
    it('is refused with the PAN code even when the field is also malformed', () => {
      const result = check('instrument', onData('country', CARD));
      expect(result.ok ? undefined : result.code).toBe(PAN);
      expect(findings(result)).toEqual([[PAN, 'event.data.country'], [SCHEMA, 'event.data.country']]);
    });
  });
});

