import { describe, expect, it } from 'vitest';
import type { ControlEventChange, EntityChange, MovementChange } from '../../schemas/bus/canonical-change.ts';
import { graphChangeOf } from './changes.ts';

const EVENT_ID = '6f1c2a7e-0000-4000-8000-000000000001';
const AT = '2026-08-10T10:00:00Z';
const base = { tenant_id: 'acme', event_id: EVENT_ID, occurred_at: AT, received_at: '2026-08-10T10:00:01Z' };
const expectedBase = { tenantId: 'acme', eventId: EVENT_ID, occurredAt: new Date(AT) };
// A movement's change names the movement, whatever it does to the network.
const movementBase = { ...expectedBase, movement: 'mv-1' };

const entity = (object: EntityChange['object'], externalId: string, data: Record<string, unknown>, current = true): EntityChange => ({
  ...base,
  object,
  external_id: externalId,
  sequence: 1,
  current,
  data,
});

const movement = (overrides: Partial<MovementChange> = {}, data: Record<string, unknown> = {}): MovementChange => ({
  ...base,
  object: 'movement',
  external_id: 'mv-1',
  type: 'p2p',
  status: 'completed',
  amount: { value: '10000', asset: 'EUR', scale: 2 },
  base_amount: { value: '10825', asset: 'USD', scale: 2 },
  debit: { account_id: 'a-1', party_id: 'p-1', country: 'US' },
  credit: { account_id: 'a-2', party_id: 'p-2', country: 'US' },
  data: { type: 'p2p', status: 'completed', ...data },
  ...overrides,
});

const edge = { qualifier: '', validFrom: null, validTo: null, attrs: {} };

describe('graphChangeOf: entities', () => {
  it('a party is a node with its attributes and a shares edge to each hashed identifier', () => {
    const change = graphChangeOf(
      entity('party', 'p-1', {
        type: 'person',
        status: 'active',
        segment: 'consumer',
        legal_names: ['Ada'],
        identifiers: [
          { type: 'email', value_hash: 'hmac-sha256:e', verification_status: 'verified' },
          { type: 'phone', value_hash: 'hmac-sha256:p' },
        ],
      }),
    );
    expect(change).toEqual({
      ...expectedBase,
      entity: {
        origin: 'party:p-1',
        sequence: 1,
        node: { ref: { kind: 'party', key: 'p-1' }, attrs: { type: 'person', status: 'active', segment: 'consumer' } },
        edges: [
          { ...edge, type: 'shares', from: { kind: 'party', key: 'p-1' }, to: { kind: 'identifier', key: 'hmac-sha256:e' }, attrs: { identifier_type: 'email' } },
          { ...edge, type: 'shares', from: { kind: 'party', key: 'p-1' }, to: { kind: 'identifier', key: 'hmac-sha256:p' }, attrs: { identifier_type: 'phone' } },
        ],
      },
    });
  });

  it('an account declares its holder, valid from opened_at to closed_at', () => {
    const data = { type: 'wallet', holder_party_id: 'p-1', asset: 'USD', status: 'closed', opened_at: '2025-02-01T00:00:00Z', closed_at: '2026-08-01T00:00:00Z' };
    expect(graphChangeOf(entity('account', 'a-1', data)).entity).toEqual({
      origin: 'account:a-1',
      sequence: 1,
      node: { ref: { kind: 'account', key: 'a-1' }, attrs: { type: 'wallet', status: 'closed', asset: 'USD' } },
      edges: [
        {
          ...edge,
          type: 'holds',
          from: { kind: 'party', key: 'p-1' },
          to: { kind: 'account', key: 'a-1' },
          validFrom: new Date('2025-02-01T00:00:00Z'),
          validTo: new Date('2026-08-01T00:00:00Z'),
        },
      ],
    });
    const open = graphChangeOf(entity('account', 'a-1', { ...data, status: 'active', closed_at: undefined }));
    expect(open.entity?.edges[0]?.validTo).toBeNull();
  });

  it('an instrument links to its hashed fingerprint, and to nothing without one', () => {
    const data = { type: 'card_token', status: 'active', country: 'US', first_seen_at: '2025-02-01T00:00:00Z' };
    expect(graphChangeOf(entity('instrument', 'i-1', { ...data, fingerprint_hash: 'hmac-sha256:f' })).entity).toEqual({
      origin: 'instrument:i-1',
      sequence: 1,
      node: { ref: { kind: 'instrument', key: 'i-1' }, attrs: { type: 'card_token', status: 'active', country: 'US' } },
      edges: [{ ...edge, type: 'shares', from: { kind: 'instrument', key: 'i-1' }, to: { kind: 'identifier', key: 'hmac-sha256:f' } }],
    });
    expect(graphChangeOf(entity('instrument', 'i-1', data)).entity?.edges).toEqual([]);
  });

  it('a relationship is an edge of its type, qualified by its external id, with validity and attrs, and no node', () => {
    const change = graphChangeOf(
      entity('relationship', 'rel-1', {
        type: 'beneficial_owner',
        from: { kind: 'party', external_id: 'p-1' },
        to: { kind: 'account', external_id: 'a-2' },
        valid_from: '2025-01-01T00:00:00Z',
        valid_to: '2026-01-01T00:00:00Z',
        ownership_pct: 25,
        source: 'kyc',
        confidence: 0.9,
        external_ref: 'x',
      }),
    );
    expect(change.entity).toEqual({
      origin: 'relationship:rel-1',
      sequence: 1,
      node: null,
      edges: [
        {
          type: 'beneficial_owner',
          from: { kind: 'party', key: 'p-1' },
          to: { kind: 'account', key: 'a-2' },
          qualifier: 'rel-1',
          validFrom: new Date('2025-01-01T00:00:00Z'),
          validTo: new Date('2026-01-01T00:00:00Z'),
          attrs: { ownership_pct: 25, source: 'kyc', confidence: 0.9 },
        },
      ],
    });
  });

  it('a version that did not become current still records its event, and does nothing else', () => {
    const change = graphChangeOf(entity('account', 'a-1', { type: 'wallet', holder_party_id: 'p-1', asset: 'USD', status: 'active', opened_at: AT }, false));
    expect(change).toEqual(expectedBase);
  });
});

describe('graphChangeOf: movements', () => {
  it('a movement between two accounts is a transfer in base minor units', () => {
    expect(graphChangeOf(movement())).toEqual({ ...movementBase, transfer: { movementId: 'mv-1', from: 'a-1', to: 'a-2', amount: 10825n } });
  });

  it('a movement without a base amount is an unpriced transfer', () => {
    expect(graphChangeOf(movement({ base_amount: null })).transfer).toEqual({ movementId: 'mv-1', from: 'a-1', to: 'a-2', amount: null });
  });

  it('a pending movement links; a failed or reversed one links nobody', () => {
    expect(graphChangeOf(movement({ status: 'pending' })).transfer?.amount).toBe(10825n);
    const seen = { device_ref_hash: 'hmac-sha256:d', instrument_ref: 'i-1' };
    expect(graphChangeOf(movement({ status: 'failed' }, seen))).toEqual(movementBase);
    expect(graphChangeOf(movement({ status: 'reversed' }, seen))).toEqual(movementBase);
  });

  it('a correction retracts what it corrects, unless it failed; one saying the payment was reversed adds no transfer', () => {
    const correcting = { links: { correction_of: 'mv-0' } };
    expect(graphChangeOf(movement({ data: correcting }))).toEqual({ ...movementBase, retracts: 'mv-0', transfer: { movementId: 'mv-1', from: 'a-1', to: 'a-2', amount: 10825n } });
    expect(graphChangeOf(movement({ status: 'reversed', data: correcting }))).toEqual({ ...movementBase, retracts: 'mv-0' });
    expect(graphChangeOf(movement({ status: 'failed', data: correcting }))).toEqual(movementBase);
    expect(graphChangeOf(movement({ data: { links: { reverses: 'mv-0' } } })).retracts).toBeUndefined();
  });

  it('a movement with one account leg is no transfer', () => {
    const change = graphChangeOf(movement({ credit: { account_id: null, party_id: null, country: 'DE' } }));
    expect(change.transfer).toBeUndefined();
  });

  it('the instrument paid with is used by the debit account, else the debit party', () => {
    expect(graphChangeOf(movement({}, { instrument_ref: 'i-1' })).observed).toEqual([
      { type: 'uses', from: { kind: 'account', key: 'a-1' }, to: { kind: 'instrument', key: 'i-1' } },
    ]);
    const partyOnly = movement({ debit: { account_id: null, party_id: 'p-1', country: null } }, { instrument_ref: 'i-1' });
    expect(graphChangeOf(partyOnly).observed).toEqual([{ type: 'uses', from: { kind: 'party', key: 'p-1' }, to: { kind: 'instrument', key: 'i-1' } }]);
  });

  it('the device and ip are shared by the debit party, else the credit party', () => {
    const hashes = { device_ref_hash: 'hmac-sha256:d', ip_hash: 'hmac-sha256:ip' };
    expect(graphChangeOf(movement({}, hashes)).observed).toEqual([
      { type: 'shares', from: { kind: 'party', key: 'p-1' }, to: { kind: 'device', key: 'hmac-sha256:d' } },
      { type: 'shares', from: { kind: 'party', key: 'p-1' }, to: { kind: 'ip', key: 'hmac-sha256:ip' } },
    ]);
    const payeeOnly = movement({ debit: { account_id: null, party_id: null, country: null } }, hashes);
    expect(graphChangeOf(payeeOnly).observed).toEqual([
      { type: 'shares', from: { kind: 'party', key: 'p-2' }, to: { kind: 'device', key: 'hmac-sha256:d' } },
      { type: 'shares', from: { kind: 'party', key: 'p-2' }, to: { kind: 'ip', key: 'hmac-sha256:ip' } },
    ]);
    // Raw values never reach the graph: only the hashed fields are read.
    expect(graphChangeOf(movement({}, { device_ref: 'raw-device', ip: '203.0.113.7' })).observed).toBeUndefined();
  });
});

describe('graphChangeOf: control events', () => {
  const control = (subjectPartyId: string | null, data: Record<string, unknown>): ControlEventChange => ({
    ...base,
    object: 'control_event',
    external_id: 'ce-1',
    type: 'auth.failed',
    subject: { kind: 'account', external_id: 'a-1' },
    subject_party_id: subjectPartyId,
    data: { type: 'auth.failed', subject: { kind: 'account', external_id: 'a-1' }, ...data },
  });

  it('a device or ip in a control event is shared by the subject party', () => {
    expect(graphChangeOf(control('p-1', { device_ref_hash: 'hmac-sha256:d', ip_hash: 'hmac-sha256:ip' }))).toEqual({
      ...expectedBase,
      observed: [
        { type: 'shares', from: { kind: 'party', key: 'p-1' }, to: { kind: 'device', key: 'hmac-sha256:d' } },
        { type: 'shares', from: { kind: 'party', key: 'p-1' }, to: { kind: 'ip', key: 'hmac-sha256:ip' } },
      ],
    });
  });

  it('without a subject party or without sightings, it only records its event', () => {
    expect(graphChangeOf(control(null, { device_ref_hash: 'hmac-sha256:d' }))).toEqual(expectedBase);
    expect(graphChangeOf(control('p-1', {}))).toEqual(expectedBase);
  });
});
