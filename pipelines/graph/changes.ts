import { instantOf } from '../../schemas/primitives/timestamp.ts';
import { declaredEdge, type GraphChange, type NodeKind, type NodeRef } from '../../platform/graph/port.ts';
import { correctedMovementOf, type CanonicalChange, type EntityChange, type MovementChange } from '../../schemas/bus/canonical-change.ts';
import type { StoredAccountData, StoredRelationshipData } from '../../schemas/families/stored.ts';

// Movements whose money moved (or is moving): failed and reversed ones link nobody.
const MOVING = new Set(['completed', 'pending']);

const date = (value: unknown): Date | null => (typeof value === 'string' ? instantOf(value) : null);

// What one canonical change does to the network. Every change is returned (so its event id is
// recorded as applied), even when it does nothing: a superseded entity version, a failed movement.
export function graphChangeOf(change: CanonicalChange): GraphChange {
  const base: GraphChange = { tenantId: change.tenant_id, eventId: change.event_id, occurredAt: instantOf(change.occurred_at) };
  switch (change.object) {
    case 'movement': {
      const corrected = correctedMovementOf(change);
      return { ...base, movement: change.external_id, ...movementEffects(change), ...(corrected === null ? {} : { retracts: corrected }) };
    }
    case 'control_event': {
      const seen = sightings(change.subject_party_id, change.data);
      return seen.length > 0 ? { ...base, observed: seen } : base;
    }
    default:
      // Only the version that became current speaks for the entity. Two releases of one entity's
      // versions can commit in either order, so the log may hand a lower current version after a
      // higher one: the store keeps the highest sequence (applyChanges).
      return change.current ? { ...base, entity: entityEffects(change) } : base;
  }
}

function entityEffects(change: EntityChange): NonNullable<GraphChange['entity']> {
  // The stored data of change.object's family (schemas/families/stored.ts).
  const data = change.data;
  const self: NodeRef = { kind: change.object as NodeKind, key: change.external_id };
  const origin = `${change.object}:${change.external_id}`;
  const sequence = change.sequence;
  switch (change.object) {
    case 'party':
      return {
        origin,
        sequence,
        node: { ref: self, attrs: pick(data, ['type', 'status', 'segment']) },
        edges: ((data.identifiers ?? []) as Array<Record<string, string>>)
          .filter((identifier) => typeof identifier.value_hash === 'string')
          .map((identifier) => declaredEdge('shares', self, { kind: 'identifier', key: identifier.value_hash! }, { attrs: { identifier_type: identifier.type } })),
      };
    case 'account':
      return {
        origin,
        sequence,
        node: { ref: self, attrs: pick(data, ['type', 'status', 'asset']) },
        edges: [declaredEdge('holds', { kind: 'party', key: (data as StoredAccountData).holder_party_id }, self, { validFrom: date(data.opened_at), validTo: date(data.closed_at) })],
      };
    case 'instrument':
      return {
        origin,
        sequence,
        node: { ref: self, attrs: pick(data, ['type', 'status', 'country']) },
        // Instruments with one fingerprint are one card or account seen under several ids.
        edges: typeof data.fingerprint_hash === 'string' ? [declaredEdge('shares', self, { kind: 'identifier', key: data.fingerprint_hash })] : [],
      };
    case 'relationship': {
      const relationship = data as StoredRelationshipData;
      return {
        origin,
        sequence,
        node: null,
        edges: [
          declaredEdge(relationship.type, { kind: relationship.from.kind, key: relationship.from.external_id }, { kind: relationship.to.kind, key: relationship.to.external_id }, {
            qualifier: change.external_id,
            validFrom: date(data.valid_from),
            validTo: date(data.valid_to),
            attrs: pick(data, ['ownership_pct', 'source', 'confidence']),
          }),
        ],
      };
    }
  }
}

function movementEffects(change: MovementChange): Pick<GraphChange, 'transfer' | 'observed'> {
  if (!MOVING.has(change.status)) return {};
  const { debit, credit, data } = change;
  const effects: Pick<GraphChange, 'transfer' | 'observed'> = {};
  if (debit.account_id && credit.account_id) {
    effects.transfer = {
      movementId: change.external_id,
      from: debit.account_id,
      to: credit.account_id,
      amount: change.base_amount ? BigInt(change.base_amount.value) : null,
    };
  }
  const observed: NonNullable<GraphChange['observed']> = [];
  const payer: NodeRef | null = debit.account_id ? { kind: 'account', key: debit.account_id } : debit.party_id ? { kind: 'party', key: debit.party_id } : null;
  if (payer && typeof data.instrument_ref === 'string') observed.push({ type: 'uses', from: payer, to: { kind: 'instrument', key: data.instrument_ref } });
  // The device and ip belong to whoever initiated the movement: the payer, else the payee.
  observed.push(...sightings(debit.party_id ?? credit.party_id, data));
  if (observed.length > 0) effects.observed = observed;
  return effects;
}

function sightings(party: string | null, data: Record<string, unknown>): NonNullable<GraphChange['observed']> {
  if (!party) return [];
  const from: NodeRef = { kind: 'party', key: party };
  const seen: NonNullable<GraphChange['observed']> = [];
  if (typeof data.device_ref_hash === 'string') seen.push({ type: 'shares', from, to: { kind: 'device', key: data.device_ref_hash } });
  if (typeof data.ip_hash === 'string') seen.push({ type: 'shares', from, to: { kind: 'ip', key: data.ip_hash } });
  return seen;
}

function pick(data: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((f) => data[f] !== undefined).map((f) => [f, data[f]]));
}
