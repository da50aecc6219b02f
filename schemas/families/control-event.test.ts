import { describe, it } from 'vitest';
import {
  IP, PAN, SCALE, SCHEMA,
  check, describeField, enumRule, expectAccepted, expectRefused, onData, textRule,
} from '../validation/test-kit.ts';

// Control event data (family control_event; immutable fact), field by field as the spec's table states it.
const CONTROL_TYPES = [
  'transfer.failed', 'withdrawal.blocked', 'velocity_check.failed', 'sanctions.hit_reported', 'screening.status_changed',
  'kyc.upgraded', 'kyc.downgraded', 'kyc.verification_failed', 'auth.failed', 'auth.suspicious_login', 'device.changed',
  'password.reset', 'beneficiary.added', 'account.restricted_by_customer', 'transfer.retried_repeatedly', 'limit.changed',
];

describeField('control_event', 'type', { required: true, ...enumRule(CONTROL_TYPES) });
describeField('control_event', 'type', { refuse: ['auth_failed', 'auth', 'transfer.failed '] });
describeField('control_event', 'subject', {
  required: true,
  accept: [{ kind: 'account', external_id: 'acct-1' }, { kind: 'instrument', external_id: 'inst-1' }],
  refuse: ['party-1', null, []],
});
describeField('control_event', 'subject.kind', { required: true, accept: ['party', 'account', 'instrument'], refuse: [1, null] });
describeField('control_event', 'subject.external_id', { required: true, ...textRule(1, 256) });
describeField('control_event', 'outcome', { required: false, ...textRule(1, 64) });
describeField('control_event', 'reason_code', { required: false, ...textRule(1, 128) });
describeField('control_event', 'device_ref', { required: false, ...textRule(1, 256) });
describeField('control_event', 'ip', { required: false, ...IP });
describeField('control_event', 'actor_kind', { required: false, ...enumRule(['customer_system', 'end_user']) });
describeField('control_event', 'customer_severity', { required: false, ...textRule(1, 32) });
describeField('control_event', 'linked_movement_id', { required: false, ...textRule(1, 256) });
describeField('control_event', 'amount', {
  required: false,
  accept: [{ value: '1000', asset: 'JPY', scale: 0 }, { value: '-1', asset: 'KWD', scale: 3 }],
  refuse: [1000, '1000', null],
});
describeField('control_event', 'amount.value', { required: true, refuse: [1000, '10.00'] });
describeField('control_event', 'amount.scale', { required: true, refuse: ['0'] });
describeField('control_event', 'amount.scale', { refuse: [2, -1, 19], code: SCALE });
describeField('control_event', 'external_ref', { required: false, ...textRule(1, 256) });

describe('control event data as a whole', () => {
  it('accepts the minimal control event', () =>
    expectAccepted(check('control_event', (e) => {
      e.data = { type: 'device.changed', subject: { kind: 'account', external_id: 'acct-1' } };
    })));

  it('refuses a member the table does not list (correction_reason is not a control event member)', () => {
    expectRefused(check('control_event', onData('correction_reason', 'typo')), SCHEMA, 'event.data.correction_reason');
    expectRefused(check('control_event', onData('severity', 'high')), SCHEMA, 'event.data.severity');
  });

  it('refuses a card number in any string field, at that field', () => {
    expectRefused(check('control_event', onData('reason_code', '4111111111111111')), PAN, 'event.data.reason_code');
    expectRefused(check('control_event', onData('subject.external_id', '4111 1111 1111 1111')), PAN, 'event.data.subject.external_id');
  });
});
