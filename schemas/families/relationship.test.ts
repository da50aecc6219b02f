import { describe, it } from 'vitest';
import {
  DATE_TIME, PAN, SCHEMA,
  check, describeField, enumRule, expectAccepted, expectRefused, onData, textRule,
} from '../validation/test-kit.ts';

// Relationship data (family relationship), field by field as the spec's table states it.
const RELATIONSHIP_TYPES = [
  'beneficial_owner', 'authorized_signer', 'joint_holder', 'employer', 'household_member',
  'parent_org', 'merchant_owner', 'agent', 'referral', 'onboarding', 'owns_instrument',
  'funds_account', 'same_as', 'other',
];

describeField('relationship', 'type', { required: true, ...enumRule(RELATIONSHIP_TYPES) });
for (const end of ['from', 'to'] as const) {
  describeField('relationship', end, {
    required: true,
    accept: [{ kind: 'account', external_id: 'acct-1' }, { kind: 'instrument', external_id: 'inst-1' }],
    refuse: ['party-1', null, []],
  });
  // EntityRef: kind (string, required), external_id (string, required). Kinds seen: party, instrument, account.
  describeField('relationship', `${end}.kind`, { required: true, accept: ['party', 'account', 'instrument'], refuse: [1, null, ['party']] });
  describeField('relationship', `${end}.external_id`, { required: true, ...textRule(1, 256) });
}
describeField('relationship', 'valid_from', { required: true, ...DATE_TIME });
describeField('relationship', 'valid_to', { required: false, ...DATE_TIME });
describeField('relationship', 'ownership_pct', { required: false, accept: [0, 100, 25, 33.33, 0.01], refuse: [-0.01, 100.01, 150, '25', null] });
describeField('relationship', 'source', { required: false, ...enumRule(['kyc', 'declared', 'derived_by_customer']) });
describeField('relationship', 'confidence', { required: false, accept: [0, 1, 0.5, 0.999], refuse: [-0.1, 1.01, 90, '0.9', null] });
describeField('relationship', 'external_ref', { required: false, ...textRule(1, 256) });
describeField('relationship', 'correction_reason', { required: false, ...textRule(0, 256) });

describe('relationship data as a whole', () => {
  it('accepts the minimal relationship', () =>
    expectAccepted(check('relationship', (e) => {
      e.data = {
        type: 'owns_instrument',
        from: { kind: 'party', external_id: 'party-1' },
        to: { kind: 'instrument', external_id: 'inst-1' },
        valid_from: '2025-01-01T00:00:00+00:00',
      };
    })));

  it('refuses a member the table does not list', () => {
    expectRefused(check('relationship', onData('weight', 1)), SCHEMA, 'event.data.weight');
    expectRefused(check('relationship', onData('from.type', 'party')), SCHEMA, 'event.data.from.type');
  });

  it('refuses a card number in an entity reference', () =>
    expectRefused(check('relationship', onData('to.external_id', '4111111111111111')), PAN, 'event.data.to.external_id'));
});
